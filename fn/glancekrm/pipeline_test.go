// The fixtures the function's tests share: ResourceLists built from YAML
// documents and test objects, one run of the function, and what to read
// back from its output.

package glancekrm

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/c5c3/glance-krm/fn/glancekrm/render"
	"github.com/c5c3/glance-krm/internal/fntest"
	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

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

// runFile runs the function on the objects of a YAML file and parses its
// answer.
func runFile(t testing.TB, path string) (*fn.ResourceList, bool) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out, failed := runFn(t, fntest.ResourceList(t, raw))
	rl, err := fn.ParseResourceList(out)
	if err != nil {
		t.Fatal(err)
	}
	return rl, failed
}

// errorResults tells whether a result is an error.
func errorResults(rs fn.Results) bool {
	for _, r := range rs {
		if r.Severity == fn.Error {
			return true
		}
	}
	return false
}

// TestWriterMatchesTheSDK: Run's writer produces exactly the SDK's bytes,
// on every golden case, generated inputs and the fuzz seeds.
func TestWriterMatchesTheSDK(t *testing.T) {
	inputs := allInputs(t)
	seeds, _ := filepath.Glob("testdata/fuzz/*/*")
	for _, s := range seeds {
		b, _ := os.ReadFile(s)
		inputs[s] = b
	}
	corpus, _ := filepath.Glob("../../krm/testdata/corpus/*.yaml")
	for _, s := range corpus {
		b, _ := os.ReadFile(s)
		inputs[s] = fntest.ResourceList(t, b)
	}
	for name, in := range inputs {
		t.Run(name, func(t *testing.T) {
			want, wantErr := fn.Run(fn.ResourceListProcessorFunc(Process), in)
			got, _, gotErr := Transform(in)
			if (wantErr == nil) != (gotErr == nil) {
				t.Fatalf("errors differ: SDK %v, Run %v", wantErr, gotErr)
			}
			if diff := cmp.Diff(string(want), string(got)); diff != "" {
				t.Errorf("Run writes differently from the SDK (-sdk +run):\n%s", diff)
			}
		})
	}
}

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
			out, failed := runFn(t, fntest.ResourceList(t, input))
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
		out[filepath.Base(dir)] = fntest.ResourceList(t, input)
	}
	for _, n := range [][2]int{{1, 1}, {3, 4}, {12, 5}} {
		out[fmt.Sprintf("generated-%d-glances-%d-backends", n[0], n[1])] = fntest.GeneratedInput(n[0], n[1])
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

// The function's processing, and its floors: parsing and serializing the
// same ResourceList with no processing at all, through the SDK and through
// the function's own writer. `make bench` compares them with benchstat
// and writes BENCHMARKS.md.
var benchSizes = []int{1, 10, 100, 1000}

const benchBackends = 5

// benchEach runs one operation on generated inputs of every size.
func benchEach(b *testing.B, op func(in []byte) error) { benchInputs(b, true, op) }

func benchInputs(b *testing.B, workloads bool, op func(in []byte) error) {
	for _, n := range benchSizes {
		in := fntest.GeneratedInputOf(n, benchBackends, workloads)
		b.Run(fmt.Sprintf("glances=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(in)))
			for b.Loop() {
				if err := op(in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkProcess(b *testing.B) {
	benchEach(b, func(in []byte) error { _, _, err := Transform(in); return err })
}

// BenchmarkProcessGenerating is BenchmarkProcess on the same Glances
// without their Deployments: the function generates each one's workload.
func BenchmarkProcessGenerating(b *testing.B) {
	benchInputs(b, false, func(in []byte) error { _, _, err := Transform(in); return err })
}

func BenchmarkFloor(b *testing.B) {
	benchEach(b, func(in []byte) error {
		rl, err := fn.ParseResourceList(in)
		if err == nil {
			_, err = rl.ToYAML()
		}
		return err
	})
}

// BenchmarkFloorItemWriter separates processing from serialization: the
// floor with the function's own writer.
func BenchmarkFloorItemWriter(b *testing.B) {
	benchEach(b, func(in []byte) error {
		rl, err := fn.ParseResourceList(in)
		if err == nil {
			_, err = WriteResourceList(rl)
		}
		return err
	})
}

// FuzzProcess feeds arbitrary bytes to the whole function: it must answer
// (a ResourceList, or an error for input that is not one) and never panic;
// and what it renders, it renders again unchanged.
func FuzzProcess(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/*/input.yaml")
	for _, s := range seeds {
		b, _ := os.ReadFile(s)
		f.Add(fntest.ResourceList(f, b))
	}
	corpus, _ := filepath.Glob("../../krm/testdata/corpus/*.yaml")
	for _, s := range corpus {
		b, _ := os.ReadFile(s)
		f.Add(b)
	}
	f.Add(fntest.GeneratedInput(2, 3))
	f.Fuzz(func(t *testing.T, in []byte) {
		out, err := fn.Run(fn.ResourceListProcessorFunc(Process), in)
		if fast, _, _ := Transform(in); string(fast) != string(out) {
			t.Fatalf("Run's writer differs from the SDK's:\n%s\n---\n%s", out, fast)
		}
		if err != nil && out == nil {
			return // not a ResourceList: the binary reports that as a result
		}
		rl, perr := fn.ParseResourceList(out)
		if perr != nil {
			t.Fatalf("the function wrote output it cannot read back: %v", perr)
		}
		if err != nil || errorResults(rl.Results) {
			return
		}
		rl.Results = nil
		again, _ := rl.ToYAML()
		out2, err := fn.Run(fn.ResourceListProcessorFunc(Process), again)
		if err != nil {
			t.Fatalf("its own output fails: %v", err)
		}
		if a, b := withoutComments(t, out), withoutComments(t, out2); a != b {
			t.Fatalf("running on its own output changed the objects:\n%s\n---\n%s", a, b)
		}
	})
}

// FuzzRules runs the admission rules on arbitrary field values: they must
// never panic, and a backend they accept must render.
func FuzzRules(f *testing.F) {
	f.Add("primary", "glance", "S3", "http://s3:9000", "bucket", "path", "s3_store_thread_pools", "10", int32(1))
	f.Add("default", "", "File", "ftp://x", "", "host", "s3_store_host", "a\nb", int32(0))
	f.Fuzz(func(t *testing.T, name, glance, typ, host, bucket, format, key, val string, size int32) {
		b := &v1alpha1.GlanceBackend{}
		b.Name, b.Namespace = name, "ns"
		b.Spec = v1alpha1.GlanceBackendSpec{
			GlanceRef: v1alpha1.GlanceRefSpec{Name: glance}, Type: v1alpha1.GlanceBackendType(typ), IsDefault: true,
			S3: &v1alpha1.S3BackendSpec{Host: host, Bucket: bucket, BucketURLFormat: format, LargeObjectSize: &size,
				CredentialsSecretRef: v1alpha1.SecretNameRefSpec{Name: "creds"}},
			ExtraOptions: map[string]v1alpha1.OptionValue{key: v1alpha1.OptionValue(val)},
		}
		b.Default()
		if len(v1alpha1.ValidateGlanceBackend(b)) > 0 {
			return
		}
		g := &v1alpha1.Glance{}
		g.Name, g.Namespace = "glance", "ns"
		if _, err := render.API(g, []*v1alpha1.GlanceBackend{b}, b.Name, nil); err != nil {
			t.Fatalf("a backend the rules accept does not render: %v", err)
		}
	})
}

// withoutComments serializes the items with every comment removed: YAML
// comments can drift between a head and a foot position when a document
// is parsed and written again, which says nothing about the function.
func withoutComments(t *testing.T, out []byte) string {
	t.Helper()
	rl, err := fn.ParseResourceList(out)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, it := range rl.Items {
		rn := it.CopyToResourceNode()
		var clear func(n *yaml.Node)
		clear = func(n *yaml.Node) {
			n.HeadComment, n.LineComment, n.FootComment = "", "", ""
			for _, c := range n.Content {
				clear(c)
			}
		}
		clear(rn.YNode())
		s, err := rn.String()
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString(s + "---\n")
	}
	return b.String()
}
