// Command house measures the shape of the code against the targets of
// issue 38 ("The house, round 3") and prints one line per measure:
// its value, the target, and what exceeds it.
//
//	go run ./hack/house [-v]   (make lint runs it with HOUSE_STRICT=1: over a target fails)
//
// It reads the Go sources with go/ast, never builds them.
package main

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// writer is where results may be constructed: the one package that turns
// findings into KRM results, SARIF and annotations.
var writer = []string{"fn/findings/"}

// resultMakers construct a KRM result; a call of one outside writer is a
// result written somewhere else.
var resultMakers = []string{"objectResult", "fieldResults", "GeneralResult", "ErrorResult",
	"ConfigObjectResult", "ErrorConfigObjectResult"}

type file struct {
	path  string
	fset  *token.FileSet
	ast   *ast.File
	lines int
	test  bool
}

type measure struct {
	name   string
	target int
	over   []string
	value  int // when not len(over)
}

func main() {
	verbose := flag.Bool("v", false, "list what exceeds each target")
	flag.Parse()
	files := load(".")
	ms := []measure{
		filesOver(files, true, 600, "test files over 600 lines"),
		funcsOver(files, true, 150, "test functions over 150 lines"),
		packagesWithoutTests(files),
		orchestratorTests(files),
		stagesWithoutExample(files),
		resultsOutsideWriter(files),
		handPrefixes(files),
		mainLines(files),
		filesOver(files, false, 450, "non-generated source files over 450 lines"),
		funcsOver(files, false, 80, "functions over 80 lines"),
		yamlLiterals(files),
	}
	failed := false
	for _, m := range ms {
		v := m.value
		if m.over != nil || v == 0 {
			v = len(m.over)
		}
		status := "ok"
		if v > m.target {
			status, failed = "over", true
		}
		fmt.Printf("%-48s %4d  (target %d) %s\n", m.name, v, m.target, status)
		if *verbose {
			for _, o := range m.over {
				fmt.Printf("    %s\n", o)
			}
		}
	}
	if failed && os.Getenv("HOUSE_STRICT") != "" {
		os.Exit(1)
	}
}

func load(root string) []file {
	var out []file
	_ = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && path != "." || d.Name() == "testdata" || d.Name() == "vendor") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, src, parser.ParseComments)
		if err != nil || ast.IsGenerated(f) {
			return nil
		}
		out = append(out, file{path: filepath.ToSlash(path), fset: fset, ast: f,
			lines: strings.Count(string(src), "\n"), test: strings.HasSuffix(path, "_test.go")})
		return nil
	})
	return out
}

func filesOver(files []file, test bool, limit int, name string) measure {
	m := measure{name: name, over: []string{}}
	for _, f := range files {
		if f.test == test && f.lines > limit {
			m.over = append(m.over, fmt.Sprintf("%s: %d", f.path, f.lines))
		}
	}
	return m
}

func funcsOver(files []file, test bool, limit int, name string) measure {
	m := measure{name: name, over: []string{}}
	for _, f := range files {
		if f.test != test {
			continue
		}
		for _, d := range f.ast.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			if test && !isTestFunc(fd.Name.Name) {
				continue
			}
			n := f.fset.Position(fd.End()).Line - f.fset.Position(fd.Pos()).Line + 1
			if n > limit {
				m.over = append(m.over, fmt.Sprintf("%s: %s %d", f.path, fd.Name.Name, n))
			}
		}
	}
	return m
}

func isTestFunc(name string) bool {
	for _, p := range []string{"Test", "Benchmark", "Fuzz", "Example"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// packagesWithoutTests are the packages of fn/, krm/ and controller/
// with source but no test file.
func packagesWithoutTests(files []file) measure {
	src, tested := map[string]bool{}, map[string]bool{}
	for _, f := range files {
		dir := filepath.Dir(f.path)
		if !hasPrefix(dir+"/", "fn/", "krm/", "controller/") || f.ast.Name.Name == "main" {
			continue
		}
		if f.test {
			tested[dir] = true
		} else {
			src[dir] = true
		}
	}
	m := measure{name: "packages without tests (fn/, krm/, controller/; not main)", over: []string{}}
	for dir := range src {
		if !tested[dir] {
			m.over = append(m.over, dir)
		}
	}
	slices.Sort(m.over)
	return m
}

func orchestratorTests(files []file) measure {
	m := measure{name: "orchestrator test files (fn/glancekrm/)", target: 10, over: []string{}}
	for _, f := range files {
		if f.test && filepath.Dir(f.path) == "fn/glancekrm" {
			m.over = append(m.over, f.path)
		}
	}
	return m
}

// stagesWithoutExample are the stage packages (fn/glancekrm/*, fn/*,
// krm/*) that have no Example function.
func stagesWithoutExample(files []file) measure {
	pkgs, examples := map[string]bool{}, map[string]bool{}
	for _, f := range files {
		dir := filepath.Dir(f.path)
		if !hasPrefix(dir+"/", "fn/", "krm/") || dir == "fn" || f.ast.Name.Name == "main" {
			continue
		}
		if !f.test {
			pkgs[dir] = true
			continue
		}
		for _, d := range f.ast.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && strings.HasPrefix(fd.Name.Name, "Example") {
				examples[dir] = true
			}
		}
	}
	m := measure{name: "stage packages without an Example (fn/, krm/)", over: []string{}}
	for dir := range pkgs {
		if !examples[dir] {
			m.over = append(m.over, dir)
		}
	}
	slices.Sort(m.over)
	return m
}

// resultsOutsideWriter are the places of fn/ outside writer that build a
// KRM result: a call of a result maker, or a fn.Result literal.
func resultsOutsideWriter(files []file) measure {
	m := measure{name: "result construction outside the results writer", over: []string{}}
	for _, f := range files {
		if f.test || !strings.HasPrefix(f.path, "fn/") || hasPrefix(f.path, writer...) {
			continue
		}
		ast.Inspect(f.ast, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.FuncDecl:
				if slices.Contains(resultMakers, n.Name.Name) {
					return false // the maker's own body
				}
			case *ast.CallExpr:
				if slices.Contains(resultMakers, callName(n.Fun)) {
					m.over = append(m.over, fmt.Sprintf("%s:%d", f.path, f.fset.Position(n.Pos()).Line))
				}
			case *ast.CompositeLit:
				if sel, ok := n.Type.(*ast.SelectorExpr); ok && sel.Sel.Name == "Result" {
					m.over = append(m.over, fmt.Sprintf("%s:%d", f.path, f.fset.Position(n.Pos()).Line))
				}
			}
			return true
		})
	}
	return m
}

func callName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		return e.Sel.Name
	}
	return ""
}

// handPrefixes are messages of fn/ that write the "glance-krm: " prefix
// themselves: a literal starting with it, Name + ": " + …, or a format
// "%s: …" whose first argument is Name.
func handPrefixes(files []file) measure {
	m := measure{name: "hand-written result prefixes (fn/)", over: []string{}}
	for _, f := range files {
		if f.test || !strings.HasPrefix(f.path, "fn/") || hasPrefix(f.path, writer...) {
			continue
		}
		ast.Inspect(f.ast, func(n ast.Node) bool {
			hit := false
			switch n := n.(type) {
			case *ast.BasicLit:
				hit = n.Kind == token.STRING && strings.HasPrefix(strings.Trim(n.Value, "`\""), "glance-krm: ")
			case *ast.BinaryExpr:
				if id, ok := n.X.(*ast.Ident); ok && id.Name == "Name" && n.Op == token.ADD {
					if lit, ok := n.Y.(*ast.BasicLit); ok && strings.HasPrefix(strings.Trim(lit.Value, "\""), ": ") {
						hit = true
					}
				}
			case *ast.CallExpr:
				if callName(n.Fun) == "Sprintf" && len(n.Args) > 1 {
					lit, ok := n.Args[0].(*ast.BasicLit)
					id, isName := n.Args[1].(*ast.Ident)
					hit = ok && strings.HasPrefix(strings.Trim(lit.Value, "\""), "%s: ") && isName && id.Name == "Name"
				}
			}
			if hit {
				m.over = append(m.over, fmt.Sprintf("%s:%d", f.path, f.fset.Position(n.Pos()).Line))
			}
			return true
		})
	}
	return m
}

func mainLines(files []file) measure {
	m := measure{name: "fn/main.go lines", target: 80}
	for _, f := range files {
		if f.path == "fn/main.go" {
			m.value = f.lines
		}
	}
	return m
}

var yamlLine = regexp.MustCompile(`^\s*(- )?[A-Za-z0-9_./"'-]+:( |$)`)

// yamlLiterals are string literals over 40 lines most of whose lines are
// YAML mappings.
func yamlLiterals(files []file) measure {
	m := measure{name: "YAML string literals over 40 lines", over: []string{}}
	for _, f := range files {
		ast.Inspect(f.ast, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING || !strings.HasPrefix(lit.Value, "`") {
				return true
			}
			lines := strings.Split(lit.Value, "\n")
			if len(lines) <= 40 {
				return true
			}
			yaml := 0
			for _, l := range lines {
				if yamlLine.MatchString(l) {
					yaml++
				}
			}
			if yaml*2 > len(lines) {
				m.over = append(m.over, fmt.Sprintf("%s:%d (%d lines)", f.path, f.fset.Position(lit.Pos()).Line, len(lines)))
			}
			return true
		})
	}
	return m
}

func hasPrefix(s string, prefixes ...string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}
