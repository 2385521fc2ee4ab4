package glancekrm

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/c5c3/glance-krm/fn/glancekrm/render"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

// FuzzProcess feeds arbitrary bytes to the whole function: it must answer
// (a ResourceList, or an error for input that is not one) and never panic;
// and what it renders, it renders again unchanged.
func FuzzProcess(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/*/input.yaml")
	for _, s := range seeds {
		b, _ := os.ReadFile(s)
		f.Add(resourceList(f, b))
	}
	corpus, _ := filepath.Glob("../../krm/testdata/corpus/*.yaml")
	for _, s := range corpus {
		b, _ := os.ReadFile(s)
		f.Add(b)
	}
	f.Add(generatedInput(2, 3))
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
