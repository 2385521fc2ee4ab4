package crds_test

import (
	"encoding/json"
	"sort"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/c5c3/glance-krm/krm/crds"
	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

// schemaDefaults lists every default in a CRD's schema by JSON path.
func schemaDefaults(t *testing.T, file string) map[string]string {
	t.Helper()
	raw, err := crds.FS.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.Unmarshal(raw, &crd); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	var walk func(path string, s *apiextensionsv1.JSONSchemaProps)
	walk = func(path string, s *apiextensionsv1.JSONSchemaProps) {
		if s.Default != nil {
			out[path] = string(s.Default.Raw)
		}
		for name, p := range s.Properties {
			walk(strings.TrimPrefix(path+"."+name, "."), &p)
		}
	}
	walk("", crd.Spec.Versions[0].Schema.OpenAPIV3Schema)
	return out
}

// goDefaults reads the same paths out of an object that Go's Default() has
// filled, starting from the object with every defaulted parent present.
func goDefaults(t *testing.T, obj interface{ Default() }, paths map[string]string) map[string]string {
	t.Helper()
	obj.Default()
	raw, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for path := range paths {
		var cur any = m
		for _, part := range strings.Split(path, ".") {
			m, ok := cur.(map[string]any)
			if !ok {
				t.Fatalf("%s: a parent is absent in the test object; add it", path)
			}
			cur = m[part]
		}
		if cur == nil {
			// false and "" are omitted by omitempty: the CRD's default of
			// false or "" and Go's zero value agree.
			cur = false
			if paths[path] == `""` {
				cur = ""
			}
		}
		// A parent defaulted to {} is filled by its fields' own defaults,
		// compared on their own paths.
		if _, isMap := cur.(map[string]any); isMap && paths[path] == "{}" {
			cur = map[string]any{}
		}
		b, _ := json.Marshal(cur)
		out[path] = string(b)
	}
	return out
}

func TestGoDefaultsMatchCRDDefaults(t *testing.T) {
	for file, obj := range map[string]interface{ Default() }{
		"glance.openstack.c5c3.io_glancebackends.yaml": &v1alpha1.GlanceBackend{Spec: v1alpha1.GlanceBackendSpec{S3: &v1alpha1.S3BackendSpec{CABundleRef: &v1alpha1.CABundleRefSpec{}}}},
		"glance.openstack.c5c3.io_glances.yaml":        &v1alpha1.Glance{Spec: v1alpha1.GlanceSpec{ServiceUser: v1alpha1.ServiceUserSpec{ApplicationCredential: &v1alpha1.ApplicationCredentialSpec{}}, Logging: &v1alpha1.LoggingSpec{}, APIServer: &v1alpha1.APIServerSpec{UWSGI: &v1alpha1.UWSGISpec{}}, SecretStoreRef: &v1alpha1.SecretStoreRefSpec{}, Cache: v1alpha1.CacheSpec{ClusterRef: &corev1.LocalObjectReference{}}, Database: v1alpha1.DatabaseSpec{ClusterRef: &corev1.LocalObjectReference{}}, PolicyOverrides: &v1alpha1.PolicySpec{ConfigMapRef: &corev1.LocalObjectReference{}}}},
	} {
		t.Run(file, func(t *testing.T) {
			want := schemaDefaults(t, file)
			if len(want) == 0 {
				t.Fatal("no defaults found in the CRD")
			}
			got := goDefaults(t, obj, want)
			if diff := cmp.Diff(want, got); diff != "" {
				keys := make([]string, 0, len(want))
				for k := range want {
					keys = append(keys, k)
				}
				sort.Strings(keys)
				t.Errorf("Go Default() disagrees with the CRD's defaults at %v (-crd +go):\n%s", keys, diff)
			}
		})
	}
}
