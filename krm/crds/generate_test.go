package crds_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/c5c3/glance-krm/internal/testenv"
)

// controllerGen is the pinned controller-gen the Makefile builds; the test
// fails, rather than skips, without it, so a stale CRD cannot pass CI.
func controllerGen(t *testing.T) string {
	t.Helper()
	bin := testenv.Env(t, "CONTROLLER_GEN_BIN", "make unit")
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("controller-gen: %v (run `make tools`)", err)
	}
	return bin
}

// TestGeneratedFilesAreCurrent regenerates the CRDs and the deepcopy code
// from the markers and fails when the committed files differ: run
// `make generate` and commit the result.
func TestGeneratedFilesAreCurrent(t *testing.T) {
	bin := controllerGen(t)
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	crdDir, objDir := t.TempDir(), t.TempDir()
	for _, args := range [][]string{
		{"crd", "paths=./krm/...", "output:crd:artifacts:config=" + crdDir},
		{"object", "paths=./krm/...", "output:object:dir=" + objDir},
	} {
		cmd := exec.Command(bin, args...)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("controller-gen %v: %v\n%s", args, err, out)
		}
	}
	compare := func(generated, committed string) {
		want, err := os.ReadFile(generated)
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(committed)
		if err != nil {
			t.Fatalf("%v: run `make generate`", err)
		}
		if !bytes.Equal(want, got) {
			t.Errorf("%s is stale: run `make generate` and commit the result", committed)
		}
	}
	entries, err := os.ReadDir(crdDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 2 {
		t.Fatalf("controller-gen wrote %d CRDs, want 2 (Glance, GlanceBackend)", len(entries))
	}
	for _, e := range entries {
		compare(filepath.Join(crdDir, e.Name()), e.Name())
	}
	compare(filepath.Join(objDir, "zz_generated.deepcopy.go"), filepath.Join(root, "krm/v1alpha1/zz_generated.deepcopy.go"))
}
