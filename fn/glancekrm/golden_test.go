package glancekrm

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/kio"
)

// -update rewrites testdata/*/expected.yaml from the function's output.
// Read `git diff testdata` before committing: a golden file is only as
// good as the review of its last change.
var update = flag.Bool("update", false, "rewrite golden files from the current output")

// resourceList wraps multi-document YAML into a ResourceList, the way
// kustomize and kpt hand objects to the function.
func resourceList(t testing.TB, docs []byte) []byte {
	t.Helper()
	nodes, err := (&kio.ByteReader{Reader: bytes.NewReader(docs), OmitReaderAnnotations: true}).Read()
	if err != nil {
		t.Fatalf("parsing input: %v", err)
	}
	rl := &fn.ResourceList{Items: fn.MoveToKubeObjects(nodes), FunctionConfig: fn.NewEmptyKubeObject()}
	out, err := rl.ToYAML()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// runFn runs the function on a ResourceList as the binary does, and
// reports whether it failed (the binary's non-zero exit).
func runFn(t testing.TB, rl []byte) ([]byte, bool) {
	t.Helper()
	out, _, err := Transform(rl)
	if err != nil && !errors.Is(err, ErrFunctionFailed) {
		t.Fatalf("function broke instead of reporting a result: %v", err)
	}
	return out, err != nil
}

// itemsOf strips the results from an output ResourceList, to feed it back
// in as kpt does when it re-runs a pipeline on its own output.
func itemsOf(t testing.TB, out []byte) []byte {
	t.Helper()
	rl, err := fn.ParseResourceList(out)
	if err != nil {
		t.Fatal(err)
	}
	rl.Results = nil
	b, err := rl.ToYAML()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

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
			if failed != hasErrors(rl.Results) {
				t.Errorf("function failed = %v, but error results present = %v", failed, hasErrors(rl.Results))
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

// runFile runs the function on the objects of a YAML file and parses its
// answer.
func runFile(t testing.TB, path string) (*fn.ResourceList, bool) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out, failed := runFn(t, resourceList(t, raw))
	rl, err := fn.ParseResourceList(out)
	if err != nil {
		t.Fatal(err)
	}
	return rl, failed
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
