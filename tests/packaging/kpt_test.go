//go:build e2e

package packaging_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/c5c3/glance-krm/internal/testenv"
)

// kptPackage copies examples/kpt into a temporary package; with exec set,
// its pipeline runs the binary instead of the image (kpt --allow-exec).
func kptPackage(t *testing.T, execPath string) string {
	t.Helper()
	if execPath == "" {
		return kptPackageStep(t, "")
	}
	return kptPackageStep(t, "- exec: "+execPath)
}

// kptPackageStep copies examples/kpt with its pipeline's step replaced
// (unless step is empty).
func kptPackageStep(t *testing.T, step string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "glance")
	testenv.CopyTree(t, filepath.Join(root, "examples/kpt"), dir, func(path string, b []byte) []byte {
		if path == "Kptfile" && step != "" {
			if !bytes.Contains(b, []byte("- image: "+fnImage+pinnedTag)) {
				t.Fatalf("examples/kpt/Kptfile no longer runs %s", fnImage+pinnedTag)
			}
			return bytes.Replace(b, []byte("- image: "+fnImage+pinnedTag), []byte(step), 1)
		}
		return b
	})
	return dir
}

func kptRender(t *testing.T, env []string, pkg string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command("kpt", append([]string{"fn", "render", pkg}, args...)...)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// snapshot reads every file of a package but what kpt ignores
// (.krmignore names .expected/, the example's expected output).
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	_ = filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() && d.Name() == ".expected" {
			return filepath.SkipDir
		}
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(path)
			rel, _ := filepath.Rel(dir, path)
			out[rel] = string(b)
		}
		return nil
	})
	return out
}

// generatedCopies counts the rendered copies of each kind in the package.
func generatedCopies(snap map[string]string) map[string]int {
	out := map[string]int{}
	for path, content := range snap {
		if !strings.Contains(content, "app.kubernetes.io/managed-by: glance-krm") {
			continue
		}
		for _, kind := range []string{"ConfigMap", "Secret"} {
			if strings.Contains(content, "\nkind: "+kind+"\n") {
				out[kind]++
			}
		}
		_ = path
	}
	return out
}

func flipDefault(t *testing.T, pkg string) {
	t.Helper()
	p := filepath.Join(pkg, "backends.yaml")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	s := strings.NewReplacer("isDefault: true", "isDefault: false", "isDefault: false", "isDefault: true").Replace(string(b))
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestKptRender(t *testing.T) {
	fnBin := mustEnv(t, "GLANCE_KRM_FN")
	env := os.Environ()

	t.Run("a second render leaves the package unchanged", func(t *testing.T) {
		pkg := kptPackage(t, fnBin)
		if out, err := kptRender(t, env, pkg, "--allow-exec"); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		first := snapshot(t, pkg)
		if n := generatedCopies(first); n["ConfigMap"] != 1 || n["Secret"] != 1 {
			t.Fatalf("first render wrote %v", n)
		}
		if out, err := kptRender(t, env, pkg, "--allow-exec"); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		if diff := cmp.Diff(first, snapshot(t, pkg)); diff != "" {
			t.Errorf("second render changed the package (-first +second):\n%s", diff)
		}
	})

	t.Run("after three default flips at most 3 copies per kind", func(t *testing.T) {
		pkg := kptPackage(t, fnBin)
		for i := range 4 {
			if i > 0 {
				// Each flip also changes glance-api.conf otherwise, so that
				// every render is a distinct ConfigMap and the history must
				// drop the oldest.
				flipDefault(t, pkg)
				appendTo(t, filepath.Join(pkg, "glance.yaml"), "  extraConfig:\n    DEFAULT:\n      public_endpoint: \"http://glance-"+strings.Repeat("i", i)+"\"\n", i > 1)
			}
			if out, err := kptRender(t, env, pkg, "--allow-exec"); err != nil {
				t.Fatalf("render %d: %v\n%s", i, err, out)
			}
		}
		n := generatedCopies(snapshot(t, pkg))
		t.Logf("generated copies after 3 flips: %v", n)
		if n["ConfigMap"] != 3 || n["Secret"] != 1 {
			t.Errorf("copies %v, want the newest 3 ConfigMaps and the one Secret (a flip does not change it)", n)
		}
	})

	t.Run("two defaults fail the render and leave the package untouched", func(t *testing.T) {
		pkg := kptPackage(t, fnBin)
		p := filepath.Join(pkg, "backends.yaml")
		b, _ := os.ReadFile(p)
		if err := os.WriteFile(p, bytes.ReplaceAll(b, []byte("isDefault: false"), []byte("isDefault: true")), 0o644); err != nil {
			t.Fatal(err)
		}
		before := snapshot(t, pkg)
		out, err := kptRender(t, env, pkg, "--allow-exec")
		if err == nil {
			t.Fatalf("kpt fn render succeeded with two defaults:\n%s", out)
		}
		if !strings.Contains(out, "NoDefaultBackend") || !strings.Contains(out, "exactly one default store is allowed") {
			t.Errorf("kpt output lacks the NoDefaultBackend result:\n%s", out)
		}
		if diff := cmp.Diff(before, snapshot(t, pkg)); diff != "" {
			t.Errorf("a failed render touched the package:\n%s", diff)
		}
	})

	t.Run("--results-dir holds the function's results", func(t *testing.T) {
		pkg := kptPackage(t, fnBin)
		results := t.TempDir()
		if out, err := kptRender(t, env, pkg, "--allow-exec", "--results-dir", results); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		b, err := os.ReadFile(filepath.Join(results, "results.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"glance-krm: rendered Glance openstack/glance", "severity: info", "path: glance.yaml"} {
			if !strings.Contains(string(b), want) {
				t.Errorf("results.yaml lacks %q:\n%s", want, b)
			}
		}
	})

	t.Run("the image, pulled by digest from a registry through podman, renders what the binary renders", func(t *testing.T) {
		ref := pushed(t, "fn")
		cenv := pullEnv(t, ref)
		viaExec, viaImage := kptPackage(t, fnBin), kptPackageStep(t, "- image: "+ref)
		if out, err := kptRender(t, env, viaExec, "--allow-exec"); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		// kpt 1.0.0-beta.56 reads KPT_FN_RUNTIME; beta.61 reads KRM_FN_RUNTIME.
		out, err := kptRender(t, append(cenv, "KPT_FN_RUNTIME=podman", "KRM_FN_RUNTIME=podman"), viaImage)
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		wasPulled(t, cenv, ref)
		a, b := snapshot(t, viaExec), snapshot(t, viaImage)
		delete(a, "Kptfile")
		delete(b, "Kptfile")
		if diff := cmp.Diff(a, b); diff != "" {
			t.Errorf("image and exec renders differ (-exec +image):\n%s", diff)
		}
	})
}

// appendTo appends an extraConfig block to the Glance, replacing the one a
// previous round added.
func appendTo(t *testing.T, file, block string, replace bool) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	if replace {
		s = s[:strings.Index(s, "  extraConfig:")]
	}
	if err := os.WriteFile(file, []byte(s+block), 0o644); err != nil {
		t.Fatal(err)
	}
}
