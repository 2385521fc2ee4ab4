package validate

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/kustomize/api/resource"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"
)

func TestFieldParts(t *testing.T) {
	for path, want := range map[string][]string{
		"spec.s3.host":                               {"spec", "s3", "host"},
		"spec.extraOptions[store_description]":       {"spec", "extraOptions", "store_description"},
		"spec.extraConfig[glance-api.conf][DEFAULT]": {"spec", "extraConfig", "glance-api.conf", "DEFAULT"},
		"spec.apis[0].backends[1]":                   {"spec", "apis", "0", "backends", "1"},
		"spec.broken[unterminated":                   {"spec", "broken", "unterminated"},
		"":                                           nil,
	} {
		if d := cmp.Diff(want, fieldParts(path)); d != "" {
			t.Errorf("fieldParts(%q) (-want +got):\n%s", path, d)
		}
	}
	if d := cmp.Diff([]string{"spec", "a/b", "c~d"}, pointerParts("/spec/a~1b/c~0d")); d != "" {
		t.Errorf("pointerParts (-want +got):\n%s", d)
	}
}

// TestGeneratedObjects: an object a generator made is located at the
// generator's entry in its kustomization, or at the function config that
// rendered it (no rule of the function reports on one yet, so the
// corpus cannot show it).
func TestGeneratedObjects(t *testing.T) {
	dir := filepath.Join("testdata", "kustomize", "cases", "configmap-policy-valid")
	tree, err := readTree(dir, map[string]*kustomization{})
	if err != nil {
		t.Fatal(err)
	}
	l := newLocator(tree, dir)
	for _, c := range []struct {
		origin resource.Origin
		file   string
		line   int
	}{
		{resource.Origin{ConfiguredIn: "kustomization.yaml", ConfiguredBy: kyaml.ResourceIdentifier{TypeMeta: kyaml.TypeMeta{APIVersion: "builtin", Kind: "ConfigMapGenerator"}}},
			filepath.Join(dir, "kustomization.yaml"), 8},
		{resource.Origin{ConfiguredIn: "glance-krm.yaml", ConfiguredBy: kyaml.ResourceIdentifier{TypeMeta: kyaml.TypeMeta{Kind: "RenderGlanceConfig"}, NameMeta: kyaml.NameMeta{Name: "glance-krm"}}},
			filepath.Join(dir, "glance-krm.yaml"), 1},
	} {
		o := c.origin
		file, line := l.object(run{}, &target{Kind: "ConfigMap", Names: []string{"glance-policy"}, Namespaces: []string{"openstack"}, Origin: &o, Field: "data"})
		if file != c.file || line != c.line {
			t.Errorf("%s: %s:%d, want %s:%d", o.ConfiguredBy.Kind, file, line, c.file, c.line)
		}
	}
}
