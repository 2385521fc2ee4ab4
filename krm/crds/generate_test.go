package crds_test

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	sigsyaml "sigs.k8s.io/yaml"

	"github.com/c5c3/glance-krm/internal/testenv"
	"github.com/c5c3/glance-krm/krm/crds"
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

// TestJSONCopiesAreCurrent: the validator reads json/<crd>.json, which
// make generate writes from each CRD (hack/crdjson): they must say the
// same.
func TestJSONCopiesAreCurrent(t *testing.T) {
	files, err := fs.Glob(crds.FS, "*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no CRDs: %v", err)
	}
	for _, f := range files {
		y, _ := crds.FS.ReadFile(f)
		want, err := sigsyaml.YAMLToJSON(y)
		if err != nil {
			t.Fatal(err)
		}
		got, err := crds.JSON.ReadFile("json/" + strings.TrimSuffix(f, ".yaml") + ".json")
		if err != nil || strings.TrimSpace(string(got)) != string(want) {
			t.Errorf("json copy of %s is missing or stale (%v): run make generate", f, err)
		}
	}
}
