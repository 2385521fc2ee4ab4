package backend

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/glance-krm/fn/explain"
	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

// TestFunctionAndControllerReadRendersAlike reads every golden render of
// the repository (the function's golden outputs and each example's
// expected build) twice: through the function's own reader of a render
// (explain, which `explain` reviews changes with) and through the
// controller's ConfigProjected verdict on the same objects, as if they
// were live. Both must find the same stores served by a mounted backends
// Secret with their credentials delivered: the two halves share the
// rules of which API a workload serves, the volume layout and the INI
// reader through krm/, and this is where a drift between them shows.
func TestFunctionAndControllerReadRendersAlike(t *testing.T) {
	files, err := filepath.Glob("../../fn/glancekrm/testdata/*/expected.yaml")
	if err != nil {
		t.Fatal(err)
	}
	examples, err := filepath.Glob("../../examples/*/.expected/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, examples...)
	if len(files) < 20 {
		t.Fatalf("only %d golden renders found", len(files))
	}
	compared := 0
	for _, file := range files {
		t.Run(filepath.Base(filepath.Dir(filepath.Dir(file)))+"/"+filepath.Base(filepath.Dir(file))+"/"+filepath.Base(file), func(t *testing.T) {
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			// A kpt package's expected state is its files one after the
			// other, each headed "# file: <path>".
			b = bytes.ReplaceAll(b, []byte("\n# file: "), []byte("\n---\n# file: "))
			render, err := explain.Read(b)
			if err != nil && strings.Contains(err.Error(), "a run of the function that failed") {
				t.Skip("a failed run renders nothing for either to read")
			}
			if err != nil && strings.Contains(err.Error(), "the function did not run") {
				t.Skip("an example's input, not a render")
			}
			if err != nil {
				t.Fatal(err)
			}
			objs, glances, backends := liveObjects(t, b)
			c := fakeReader(t, objs...)
			r := readers{objects: c, live: c, secrets: c, sections: &sections{}}
			fnSays, controllerSays := map[string]bool{}, map[string]bool{}
			for _, g := range glances {
				rg := render.Glances[g.Namespace+"/"+g.Name]
				for _, b := range backends {
					if b.Spec.GlanceRef.Name != g.Name || b.Namespace != g.Namespace {
						continue
					}
					id := g.Name + "/" + b.Name
					served := false
					for _, stores := range rg.APIStores {
						served = served || slices.Contains(stores, b.Name)
					}
					fnSays[id] = served && len(rg.Workloads) > 0
					cond, err := projection(context.Background(), r, g, b.Name)
					if err != nil {
						t.Fatal(err)
					}
					controllerSays[id] = cond.OK
					compared++
				}
			}
			if diff := cmp.Diff(fnSays, controllerSays); diff != "" {
				t.Errorf("stores served (-function +controller):\n%s", diff)
			}
		})
	}
	if compared < 20 {
		t.Errorf("only %d (Glance, store) pairs compared", compared)
	}
}

// liveObjects are a render's objects as the API server would hold them
// (stringData folded into data, the CRDs' defaults applied).
func liveObjects(t *testing.T, b []byte) (objs []client.Object, glances []*v1alpha1.Glance, backends []*v1alpha1.GlanceBackend) {
	t.Helper()
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(b), 4096)
	var docs []map[string]any
	for {
		var m map[string]any
		if err := dec.Decode(&m); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		if m == nil {
			continue
		}
		if m["kind"] == "ResourceList" {
			items, _ := m["items"].([]any)
			for _, it := range items {
				docs = append(docs, it.(map[string]any))
			}
			continue
		}
		docs = append(docs, m)
	}
	// An object the API server would refuse (a wrong type) is not live:
	// neither half reads it.
	convert := func(m map[string]any, into any) bool {
		return runtime.DefaultUnstructuredConverter.FromUnstructured(m, into) == nil
	}
	for _, m := range docs {
		switch u := (&unstructured.Unstructured{Object: m}); u.GetKind() {
		case v1alpha1.GlanceKind:
			g := &v1alpha1.Glance{}
			if !convert(m, g) {
				continue
			}
			g.Default()
			glances, objs = append(glances, g), append(objs, g)
		case v1alpha1.GlanceBackendKind:
			be := &v1alpha1.GlanceBackend{}
			if !convert(m, be) {
				continue
			}
			be.Default()
			backends, objs = append(backends, be), append(objs, be)
		case "Deployment":
			d := &appsv1.Deployment{}
			if !convert(m, d) {
				t.Fatalf("Deployment %s does not decode", u.GetName())
			}
			objs = append(objs, d)
		case "Secret":
			s := &corev1.Secret{}
			if !convert(m, s) {
				t.Fatalf("Secret %s does not decode", u.GetName())
			}
			if s.Data == nil {
				s.Data = map[string][]byte{}
			}
			for k, v := range s.StringData {
				s.Data[k] = []byte(v)
			}
			objs = append(objs, s)
		}
	}
	return objs, glances, backends
}
