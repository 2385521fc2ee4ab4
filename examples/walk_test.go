package examples_test

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/c5c3/glance-krm/internal/testenv"
)

var update = flag.Bool("update", false, "rewrite every example's .expected/ from the current output (then read the diff)")

// TestEveryExampleHasItsExpectedOutput walks examples/ the way the kpt
// functions catalog checks its examples: every example has a README.md and
// a .expected/ folder, and every build in it produces exactly what
// .expected/ holds. A build is a folder with a kustomization.yaml (built
// with `kustomize build --enable-alpha-plugins --enable-exec`, expected in
// .expected/<folder>.yaml, or .expected/<folder>.stderr when it must fail)
// or a kpt package (rendered with `kpt fn render`, the package afterwards
// expected in .expected/package.yaml). The root folder's name is "output".
//
// Two substitutions keep the runs on this machine: a container function
// runs as the same binary through exec (tests/packaging proves the image's
// output equal to the same file), and a bare `glance-krm-fn` is looked up
// on PATH, where bin/ is put, as the Argo CD sidecar has it.
func TestEveryExampleHasItsExpectedOutput(t *testing.T) {
	testenv.External(t, "kustomize and the function binary")
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		name := e.Name()
		t.Run(name, func(t *testing.T) {
			for _, f := range []string{"README.md", ".expected"} {
				if _, err := os.Stat(filepath.Join(name, f)); err != nil {
					t.Errorf("examples/%s has no %s", name, f)
				}
			}
			got := map[string]string{}
			for _, b := range builds(t, name) {
				key, out := b.run(t)
				got[key] = out
			}
			compareExpected(t, filepath.Join(name, ".expected"), got)
		})
	}
}

type exampleBuild struct {
	example, dir string // dir is relative to the example
	kpt          bool
}

// builds finds every buildable folder of an example, sorted.
func builds(t *testing.T, example string) []exampleBuild {
	t.Helper()
	var out []exampleBuild
	err := filepath.WalkDir(example, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && strings.HasPrefix(d.Name(), ".") {
			return filepath.SkipDir
		}
		rel, _ := filepath.Rel(example, filepath.Dir(path))
		switch d.Name() {
		case "kustomization.yaml":
			out = append(out, exampleBuild{example: example, dir: rel})
		case "Kptfile":
			out = append(out, exampleBuild{example: example, dir: rel, kpt: true})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].dir < out[j].dir })
	if len(out) == 0 {
		t.Fatalf("examples/%s has nothing to build", example)
	}
	return out
}

// run builds in a copy of the example (so nothing is written beside the
// sources) and returns the expected file's name and its content.
func (b exampleBuild) run(t *testing.T) (string, string) {
	t.Helper()
	key := strings.ReplaceAll(b.dir, string(filepath.Separator), "_")
	if key == "." {
		key = "output"
	}
	if b.kpt {
		return "package.yaml", renderKpt(t, filepath.Join(b.example, b.dir))
	}
	// Copy the whole examples/ tree: examples refer to each other (../standalone).
	root := copyExamples(t)
	cmd := exec.Command(kustomizeBin(t), "build", "--enable-alpha-plugins", "--enable-exec", filepath.Join(root, b.example, b.dir))
	cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(fnBinary)+string(os.PathListSeparator)+os.Getenv("PATH"))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			t.Fatal(err)
		}
		return key + ".stderr", strings.ReplaceAll(stderr.String(), root, "<examples>")
	}
	return key + ".yaml", stdout.String()
}

// copyExamples copies examples/ with every function pointed at the
// binary: exec paths as they are, container functions as exec.
func copyExamples(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	testenv.CopyTree(t, ".", dir, func(_ string, b []byte) []byte {
		b = execPath.ReplaceAll(b, []byte(fnBinary))
		return containerAsExec.ReplaceAll(b, []byte("exec:\n${1}path: "+fnBinary))
	})
	return dir
}

// renderKpt renders a kpt package with the real kpt, its image step run as
// the binary (--allow-exec), and returns every file of the package after
// the render, in path order.
func renderKpt(t *testing.T, pkg string) string {
	t.Helper()
	kpt := testenv.Tool(t, "kpt", "KPT_BIN", "make e2e-packaging")
	dir := filepath.Join(t.TempDir(), filepath.Base(pkg))
	var step []byte // the Kptfile's own pipeline step, put back in the snapshot
	testenv.CopyTree(t, pkg, dir, func(path string, b []byte) []byte {
		if path == "Kptfile" {
			step = kptImage.Find(b)
			return kptImage.ReplaceAll(b, []byte("- exec: "+fnBinary))
		}
		return b
	})
	if out, err := exec.Command(kpt, "fn", "render", dir, "--allow-exec", "--results-dir", t.TempDir()).CombinedOutput(); err != nil {
		t.Fatalf("kpt fn render: %v\n%s", err, out)
	}
	var sb strings.Builder
	for _, f := range testenv.Files(t, dir) {
		if strings.HasPrefix(f, ".") || (f != "Kptfile" && filepath.Ext(f) != ".yaml") {
			continue // .expected/, .krmignore, README.md: not the package's resources
		}
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if f == "Kptfile" {
			b = bytes.ReplaceAll(b, []byte("- exec: "+fnBinary), step)
		}
		sb.WriteString("# file: " + filepath.ToSlash(f) + "\n" + string(b))
		if !strings.HasSuffix(sb.String(), "\n") {
			sb.WriteString("\n")
		}
	}
	return sb.String()
}

// compareExpected compares (or, with -update, writes) every file of a
// .expected/ folder but config files a reader may keep there.
func compareExpected(t *testing.T, dir string, got map[string]string) {
	t.Helper()
	if *update {
		_ = os.RemoveAll(dir)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, content := range got {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return
	}
	want := map[string]string{}
	for _, f := range testenv.Files(t, dir) {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		want[f] = string(b)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("%s differs from the build (-expected +built); `go test ./examples -run TestEveryExampleHasItsExpectedOutput -update` rewrites it, then read the diff:\n%s", dir, d)
	}
}

var (
	// containerAsExec turns `container: image: …` into `exec: path: …` at
	// the same indentation.
	containerAsExec = regexp.MustCompile(`container:\n(\s+)image: \S+`)
	kptImage        = regexp.MustCompile(`- image: \S+`)
	execPath        = regexp.MustCompile(`(\.\./)+bin/glance-krm-fn`)
)
