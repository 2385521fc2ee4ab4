package glancekrm

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kptdev/krm-functions-sdk/go/fn"
)

// -update rewrites testdata/*/expected.yaml from the function's output.
// Read `git diff testdata` before committing: a golden file is only as
// good as the review of its last change.
var update = flag.Bool("update", false, "rewrite golden files from the current output")

func goldenCases(t *testing.T) []string {
	dirs, err := filepath.Glob("testdata/*/input.yaml")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no golden cases: %v", err)
	}
	for i := range dirs {
		dirs[i] = filepath.Dir(dirs[i])
	}
	return dirs
}

// TestGolden runs every testdata case and compares the whole output
// ResourceList (objects and results) with expected.yaml. A case whose
// results hold an error must make the function fail, and only such a case.
func TestGolden(t *testing.T) {
	for _, dir := range goldenCases(t) {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			input, err := os.ReadFile(filepath.Join(dir, "input.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			out, failed := runFn(t, resourceList(t, input))
			rl, err := fn.ParseResourceList(out)
			if err != nil {
				t.Fatal(err)
			}
			checkWording(t, rl.Results)
			if failed != errorResults(rl.Results) {
				t.Errorf("function failed = %v, but error results present = %v", failed, errorResults(rl.Results))
			}
			golden := filepath.Join(dir, "expected.yaml")
			if *update {
				if err := os.WriteFile(golden, out, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update and review the file)", err)
			}
			if diff := cmp.Diff(string(want), string(out)); diff != "" {
				t.Errorf("output differs from %s (-want +got):\n%s", golden, diff)
			}
		})
	}
}

// TestIdempotent: running the function on its own output changes nothing,
// byte for byte, for every golden case (kpt re-runs pipelines on what they
// wrote last time; Argo CD re-renders on every refresh).
func TestIdempotent(t *testing.T) {
	for name, rl := range allInputs(t) {
		t.Run(name, func(t *testing.T) {
			once, _ := runFn(t, rl)
			twice, _ := runFn(t, itemsOf(t, once))
			if diff := cmp.Diff(string(itemsOf(t, once)), string(itemsOf(t, twice))); diff != "" {
				t.Errorf("second run changed the objects (-first +second):\n%s", diff)
			}
		})
	}
}

// allInputs are the golden cases and generated inputs of several sizes,
// as ResourceLists, by name.
func allInputs(t *testing.T) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, dir := range goldenCases(t) {
		input, err := os.ReadFile(filepath.Join(dir, "input.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(dir)] = resourceList(t, input)
	}
	for _, n := range [][2]int{{1, 1}, {3, 4}, {12, 5}} {
		out[fmt.Sprintf("generated-%d-glances-%d-backends", n[0], n[1])] = generatedInput(n[0], n[1])
	}
	return out
}

// checkWording holds every result of a golden case to one of the two
// forms results.go describes: "<field path>: …" with that field set, or
// "glance-krm: …".
func checkWording(t *testing.T, rs fn.Results) {
	t.Helper()
	for _, r := range rs {
		fieldForm := r.Field != nil && strings.HasPrefix(r.Message, r.Field.Path+": ")
		if !fieldForm && !strings.HasPrefix(r.Message, Name+": ") {
			t.Errorf("result %q is in neither form (field %v)", r.Message, r.Field)
		}
	}
}
