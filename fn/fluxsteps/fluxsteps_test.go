package fluxsteps

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Two successive renders of one Glance (examples/several-apis): moving
// the stores renames rendered copies the first render's pods mount.
const (
	firstRender  = "../../examples/several-apis/.expected/1-add-api.yaml"
	secondRender = "../../examples/several-apis/.expected/2-move-stores.yaml"
)

func runSteps(t *testing.T, dir, build string) (int, string) {
	t.Helper()
	in, err := os.ReadFile(build)
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	code := Command([]string{dir}, bytes.NewReader(in), nil, &stderr)
	return code, stderr.String()
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestFluxStepsCarriesIntoThePrepareStep: a second render keeps the
// copies the first one's pods mount, in 0-prepare, marked carried; the
// other folders hold only the build's objects.
func TestFluxStepsCarriesIntoThePrepareStep(t *testing.T) {
	dir := t.TempDir()
	if code, stderr := runSteps(t, dir, firstRender); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, step := range []string{"0-prepare", "1-workload", "2-after"} {
		if k := read(t, filepath.Join(dir, step, "kustomization.yaml")); !strings.HasPrefix(k, stepHeader) || !strings.Contains(k, "  - resources.yaml\n") {
			t.Errorf("%s/kustomization.yaml:\n%s", step, k)
		}
		if r := read(t, filepath.Join(dir, step, "resources.yaml")); strings.Contains(r, "glance.openstack.c5c3.io/carried") {
			t.Errorf("a first render carries something into %s", step)
		}
	}
	if code, stderr := runSteps(t, dir, secondRender); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if n := strings.Count(read(t, filepath.Join(dir, "0-prepare", "resources.yaml")), "glance.openstack.c5c3.io/carried"); n == 0 {
		t.Error("the second render carries no copy of the first into 0-prepare")
	}
	for _, step := range []string{"1-workload", "2-after"} {
		if strings.Contains(read(t, filepath.Join(dir, step, "resources.yaml")), "glance.openstack.c5c3.io/carried") {
			t.Errorf("a carried copy went to %s", step)
		}
	}
}

// TestFluxStepsReadsTheSingleFolderLayout: an OUTDIR the single-folder
// pre-render wrote is the previous run (its copies carried into
// 0-prepare), and its two files go.
func TestFluxStepsReadsTheSingleFolderLayout(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(legacyHeader+": the rendered output of an\n# overlay.\nresources:\n  - resources.yaml\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "resources.yaml"), []byte(read(t, firstRender)), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, stderr := runSteps(t, dir, secondRender); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, f := range []string{"kustomization.yaml", "resources.yaml"} {
		if _, err := os.Stat(filepath.Join(dir, f)); !os.IsNotExist(err) {
			t.Errorf("the single folder's %s is still there (%v)", f, err)
		}
	}
	if !strings.Contains(read(t, filepath.Join(dir, "0-prepare", "resources.yaml")), "glance.openstack.c5c3.io/carried") {
		t.Error("the single folder's copies are not carried")
	}
}

// TestFluxStepsLeavesAForeignFolderAlone: a kustomization.yaml in OUTDIR
// that the pre-render did not write is neither read nor removed.
func TestFluxStepsLeavesAForeignFolderAlone(t *testing.T) {
	dir := t.TempDir()
	mine := "resources: [resources.yaml]\n"
	if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(mine), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, stderr := runSteps(t, dir, firstRender); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if read(t, filepath.Join(dir, "kustomization.yaml")) != mine {
		t.Error("a kustomization.yaml of the user's was changed")
	}
}

// TestFluxStepsFailsWhole: bad usage is exit 2; a build that is not a
// stream of objects is exit 1, names the document, and writes nothing.
func TestFluxStepsFailsWhole(t *testing.T) {
	var stderr bytes.Buffer
	for _, args := range [][]string{nil, {"a", "b"}, {"-x"}} {
		if code := Command(args, strings.NewReader(""), nil, &stderr); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
	dir := filepath.Join(t.TempDir(), "out")
	stderr.Reset()
	code := Command([]string{dir}, strings.NewReader("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\n- not an object\n"), nil, &stderr)
	if code != 1 || !strings.Contains(stderr.String(), "document 2") {
		t.Errorf("exit %d, %q: want 1 naming document 2", code, stderr.String())
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("a failed run wrote %s (%v)", dir, err)
	}
}
