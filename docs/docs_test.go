// Package docs holds the project's design documents; its test keeps them
// true to the repository.
package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var (
	mdLink = regexp.MustCompile(`\]\(([^)#\s]+)(#[^)]*)?\)`)
	// a path with a folder, or a Go or shell file
	codePath = regexp.MustCompile("`((?:[a-z0-9_.-]+/)+[a-z0-9_.-]+\\.(?:go|sh|yaml|md)|[a-z0-9_.-]+\\.(?:go|sh))`")
)

// markdown is every Markdown file of the repository but test data.
func markdown(t *testing.T) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir("..", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && d.Name() != ".." || d.Name() == "testdata" || d.Name() == "bin" || d.Name() == "build") {
			return filepath.SkipDir
		}
		if strings.HasSuffix(path, ".md") {
			out = append(out, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestNoLinkLeavesTheRepository: a newcomer who clones only this
// repository finds everything a document points at.
func TestNoLinkLeavesTheRepository(t *testing.T) {
	root, _ := filepath.Abs("..")
	for _, file := range markdown(t) {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		text := string(raw)
		// Spelled in pieces so this file is not itself such a reference.
		for _, outside := range []string{"../" + "shared", "DESIGN" + ".md", "/" + "work/", "seeds" + "/"} {
			if strings.Contains(text, outside) {
				t.Errorf("%s mentions %q, which is outside the repository", file, outside)
			}
		}
		for _, m := range mdLink.FindAllStringSubmatch(text, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			abs, _ := filepath.Abs(filepath.Join(filepath.Dir(file), target))
			if !strings.HasPrefix(abs, root+string(filepath.Separator)) && abs != root {
				t.Errorf("%s links %s, outside the repository", file, target)
				continue
			}
			if _, err := os.Stat(abs); err != nil {
				t.Errorf("%s links %s, which does not exist", file, target)
			}
		}
	}
}

// TestEveryNamedFileExists: each file docs/ names in backquotes is there
// (a bare file name is looked for anywhere in the repository).
func TestEveryNamedFileExists(t *testing.T) {
	all := map[string]bool{}
	_ = filepath.WalkDir("..", func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel("..", path)
			all[filepath.ToSlash(rel)] = true
			all[d.Name()] = true
		}
		return nil
	})
	docs, _ := filepath.Glob("*.md")
	for _, file := range docs {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range codePath.FindAllStringSubmatch(string(raw), -1) {
			if !all[m[1]] {
				t.Errorf("%s names %s, which is not in the repository", file, m[1])
			}
		}
	}
}

// TestEveryRuleFileIsInTheContract: the rule table of contract.md names
// every file that holds admission rules, so no rule is missing from it.
func TestEveryRuleFileIsInTheContract(t *testing.T) {
	raw, err := os.ReadFile("contract.md")
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob("../krm/v1alpha1/rules_*.go")
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		if !strings.Contains(string(raw), "`"+filepath.Base(f)+"`") {
			t.Errorf("docs/contract.md does not name %s: add its rules to the table", filepath.Base(f))
		}
	}
}
