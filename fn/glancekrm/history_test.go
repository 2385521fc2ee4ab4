package glancekrm

import (
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/c5c3/glance-krm/fn/glancekrm/history"

	"github.com/google/go-cmp/cmp"
	"github.com/kptdev/krm-functions-sdk/go/fn"

	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

// state is a ResourceList fed back round after round, as a kpt package
// holds the function's output and runs it again after each edit.
type state struct {
	t  *testing.T
	rl *fn.ResourceList
}

func newState(t *testing.T, inputFile string) *state {
	input, err := os.ReadFile(inputFile)
	if err != nil {
		t.Fatal(err)
	}
	rl, err := fn.ParseResourceList(resourceList(t, input))
	if err != nil {
		t.Fatal(err)
	}
	return &state{t: t, rl: rl}
}

func (s *state) render() {
	s.t.Helper()
	b, err := s.rl.ToYAML()
	if err != nil {
		s.t.Fatal(err)
	}
	out, failed := runFn(s.t, b)
	if s.rl, err = fn.ParseResourceList(out); err != nil {
		s.t.Fatal(err)
	}
	if failed {
		s.t.Fatalf("render failed: %v", s.rl.Results)
	}
	s.rl.Results = nil
}

func (s *state) object(kind, name string) *fn.KubeObject {
	for _, o := range s.rl.Items {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	s.t.Fatalf("no %s %s", kind, name)
	return nil
}

func (s *state) set(kind, name string, value any, path ...string) {
	s.t.Helper()
	if err := s.object(kind, name).SetNestedField(value, path...); err != nil {
		s.t.Fatal(err)
	}
}

// copies lists the generated objects of one kind as name -> revision.
func (s *state) copies(kind string) map[string]string {
	out := map[string]string{}
	for _, o := range s.rl.Items {
		if o.GetKind() == kind && o.GetLabel(v1alpha1.LabelManagedBy) == v1alpha1.ManagedByGlanceKRM {
			out[o.GetName()] = o.GetAnnotation(v1alpha1.AnnotationRevision)
		}
	}
	return out
}

func (s *state) mounted() (configMap, secret string) {
	d := s.object("Deployment", "glance")
	vols, _, _ := d.NestedSlice("spec", "template", "spec", "volumes")
	for _, v := range vols {
		if v.GetString("name") != v1alpha1.VolumeConfig {
			continue
		}
		for _, src := range v.GetMap("projected").GetSlice("sources") {
			if cm := src.GetMap("configMap"); cm != nil {
				configMap = cm.GetString("name")
			}
			if sec := src.GetMap("secret"); sec != nil {
				secret = sec.GetString("name")
			}
		}
	}
	return configMap, secret
}

// TestHistory: a default flip changes the ConfigMap only; flipping back
// reuses the old name as the newest revision; at most history.Limit copies
// of each kind are kept, the oldest dropped first; adding a backend changes
// both names.
func TestHistory(t *testing.T) {
	s := newState(t, "testdata/standalone/input.yaml")
	s.render()
	cm1, sec1 := s.mounted()
	want := func(kind string, w map[string]string) {
		t.Helper()
		if diff := cmp.Diff(w, s.copies(kind)); diff != "" {
			t.Errorf("%s copies (-want +got):\n%s", kind, diff)
		}
	}
	want("ConfigMap", map[string]string{cm1: "1"})
	want("Secret", map[string]string{sec1: "1"})

	flip := func(newDefault string) {
		for _, b := range []string{"primary", "secondary"} {
			s.set("GlanceBackend", b, b == newDefault, "spec", "isDefault")
		}
		s.render()
	}
	flip("secondary")
	cm2, sec2 := s.mounted()
	if cm2 == cm1 || sec2 != sec1 {
		t.Fatalf("after a default flip: ConfigMap %s -> %s (must change), Secret %s -> %s (must not)", cm1, cm2, sec1, sec2)
	}
	want("ConfigMap", map[string]string{cm1: "1", cm2: "2"})
	want("Secret", map[string]string{sec1: "1"})

	flip("primary")
	if cm, _ := s.mounted(); cm != cm1 {
		t.Fatalf("flipping back mounts %s, want the first ConfigMap %s again", cm, cm1)
	}
	want("ConfigMap", map[string]string{cm1: "3", cm2: "2"})

	s.set("Glance", "glance", map[string]any{"DEFAULT": map[string]any{"show_image_direct_url": "true"}}, "spec", "extraConfig")
	s.render()
	cm3, _ := s.mounted()
	want("ConfigMap", map[string]string{cm1: "3", cm2: "2", cm3: "4"})

	s.set("Glance", "glance", map[string]any{"DEFAULT": map[string]any{"show_image_direct_url": "false"}}, "spec", "extraConfig")
	s.render()
	cm4, _ := s.mounted()
	want("ConfigMap", map[string]string{cm1: "3", cm3: "4", cm4: "5"}) // cm2, the oldest, is dropped

	// Adding a backend changes both names.
	third := s.object("GlanceBackend", "secondary").Copy()
	if err := third.SetName("tertiary"); err != nil {
		t.Fatal(err)
	}
	s.rl.Items = append(s.rl.Items, third)
	s.render()
	cm5, sec5 := s.mounted()
	if cm5 == cm4 || sec5 == sec1 {
		t.Fatalf("adding a backend must change both names: ConfigMap %s -> %s, Secret %s -> %s", cm4, cm5, sec1, sec5)
	}
	want("Secret", map[string]string{sec1: "1", sec5: "2"})
	if n := len(s.copies("ConfigMap")); n != history.Limit {
		t.Errorf("%d ConfigMap copies, want %d", n, history.Limit)
	}
}

// TestDeterministic: the same input gives byte-identical output, run after
// run and whatever the order of the input objects.
func TestDeterministic(t *testing.T) {
	for name, input := range allInputs(t) {
		t.Run(name, func(t *testing.T) {
			rl, err := fn.ParseResourceList(input)
			if err != nil {
				t.Fatal(err)
			}
			first, _ := runFn(t, input)
			rng := rand.New(rand.NewPCG(1, 2))
			for i := range 20 {
				items := slices.Clone(rl.Items)
				rng.Shuffle(len(items), func(a, b int) { items[a], items[b] = items[b], items[a] })
				// ToYAML would sort the items: write them in this order by hand.
				in := []byte("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n")
				for _, it := range items {
					in = append(in, indentItem(it.String())...)
				}
				out, _ := runFn(t, in)
				if diff := cmp.Diff(string(first), string(out)); diff != "" {
					t.Fatalf("run %d with shuffled input differs (-first +this):\n%s", i, diff)
				}
			}
		})
	}
}

func indentItem(doc string) string {
	lines := strings.Split(strings.TrimSuffix(doc, "\n"), "\n")
	return "- " + strings.Join(lines, "\n  ") + "\n"
}

// TestHistoryWithSeveralAPIs: under kpt each API's current files stay
// current while another API's change; the files an API no longer mounts
// become history like any earlier copy.
func TestHistoryWithSeveralAPIs(t *testing.T) {
	s := newState(t, "testdata/several-apis/input.yaml")
	s.render()
	before := s.copies("ConfigMap")
	if len(before) != 2 {
		t.Fatalf("two APIs with different stores: want two ConfigMaps, got %v", before)
	}
	defaultCM, _ := s.mounted()
	s.set("Glance", "glance", []any{
		map[string]any{"name": "default"},
		map[string]any{"name": "next", "replicas": 1, "backends": []any{"a", "b"}, "defaultBackend": "b"},
	}, "spec", "apis")
	s.render()
	after := s.copies("ConfigMap")
	if len(after) != 3 || after[defaultCM] != "1" {
		t.Errorf("next's change must add one ConfigMap and keep default's as it was: before %v, after %v", before, after)
	}
	if cm, _ := s.mounted(); cm != defaultCM {
		t.Errorf("the default API's Deployment moved from %s to %s when only next changed", defaultCM, cm)
	}
	s.render()
	if again := s.copies("ConfigMap"); !cmp.Equal(again, after) {
		t.Errorf("a second run changed the copies: %v -> %v", after, again)
	}
}
