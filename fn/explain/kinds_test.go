package explain

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// A warning kind exists once it is a constant or a warn call names it;
// leaving it out of Kinds (so --fail-on refuses it) or out of the table of
// kinds in docs/doors.md is caught here, not by a user.
func TestEveryWarningKindIsListed(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	consts := map[string]string{} // name -> kind
	var warned, declared []string
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.GenDecl:
				if n.Tok != token.CONST {
					return true
				}
				block := n.Doc != nil && strings.HasPrefix(n.Doc.Text(), "Warning kinds")
				for _, spec := range n.Specs {
					vs := spec.(*ast.ValueSpec)
					for i, id := range vs.Names {
						if i >= len(vs.Values) {
							continue
						}
						if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
							v, _ := strconv.Unquote(lit.Value)
							consts[id.Name] = v
							if block {
								declared = append(declared, v)
							}
						}
					}
				}
			case *ast.CallExpr:
				if sel, ok := n.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "warn" && len(n.Args) > 0 {
					if id, ok := n.Args[0].(*ast.Ident); ok {
						warned = append(warned, id.Name)
					}
				}
			}
			return true
		})
	}
	doors, err := os.ReadFile("../../docs/doors.md")
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]bool{}
	for _, name := range warned {
		if v, ok := consts[name]; ok {
			kinds[v] = true
		}
	}
	// and every constant of the block that declares them.
	for _, v := range declared {
		kinds[v] = true
	}
	if len(kinds) < 10 {
		t.Fatalf("found %d warning kinds: the scan is broken", len(kinds))
	}
	for k := range kinds {
		if !slices.Contains(Kinds, k) {
			t.Errorf("warning kind %q is not in Kinds: --fail-on would refuse it", k)
		}
		if !strings.Contains(string(doors), "`"+k+"`") {
			t.Errorf("warning kind %q is not in docs/doors.md's table of kinds", k)
		}
	}
}
