package decode

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kptdev/krm-functions-sdk/go/fn"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func object(t *testing.T, y string) *fn.KubeObject {
	t.Helper()
	o, err := fn.ParseKubeObject([]byte(y))
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func TestKindProblem(t *testing.T) {
	for name, c := range map[string]struct {
		obj  string
		want string // "" when the object is fine or not ours
	}{
		"a Glance":             {obj: "apiVersion: glance.openstack.c5c3.io/v1alpha1\nkind: Glance\nmetadata: {name: g}", want: ""},
		"not ours":             {obj: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: g}", want: ""},
		"a mis-cased kind":     {obj: "apiVersion: glance.openstack.c5c3.io/v1alpha1\nkind: glancebackend\nmetadata: {name: g}", want: `did you mean "GlanceBackend"?`},
		"a list":               {obj: "apiVersion: glance.openstack.c5c3.io/v1alpha1\nkind: GlanceList\nmetadata: {name: g}", want: "a list is not an object"},
		"another kind":         {obj: "apiVersion: glance.openstack.c5c3.io/v1alpha1\nkind: Nova\nmetadata: {name: g}", want: "is not a kind of glance.openstack.c5c3.io"},
		"no apiVersion":        {obj: "kind: Glance\nmetadata: {name: g}", want: "has no apiVersion"},
		"a mis-cased group":    {obj: "apiVersion: Glance.OpenStack.c5c3.io/v1alpha1\nkind: Glance\nmetadata: {name: g}", want: "set apiVersion: glance.openstack.c5c3.io/v1alpha1"},
		"our kind, other team": {obj: "apiVersion: example.com/v1\nkind: Glance\nmetadata: {name: g}", want: ""},
	} {
		t.Run(name, func(t *testing.T) {
			got := KindProblem(object(t, c.obj))
			if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
				t.Errorf("KindProblem = %q, want %q", got, c.want)
			}
		})
	}
}

// The decoder refuses what the API server's strict field validation
// refuses, with the path, and applies the CRD's defaults.
func TestBackend(t *testing.T) {
	const head = "apiVersion: glance.openstack.c5c3.io/v1alpha1\nkind: GlanceBackend\nmetadata: {name: fast, namespace: ns}\nspec:\n  glanceRef: {name: glance}\n  type: S3\n"
	const s3 = "  s3: {host: https://s3.example.com, bucket: b, credentialsSecretRef: {name: c}}\n"
	for name, c := range map[string]struct {
		spec   string
		ok     bool
		fields []string
	}{
		"valid":              {spec: s3, ok: true},
		"an unknown field":   {spec: s3 + "  isdefault: true\n", ok: true, fields: []string{"spec.isdefault"}},
		"a duplicated field": {spec: s3 + "  isDefault: true\n  isDefault: false\n", ok: true, fields: []string{"spec.isDefault"}},
		"a wrong type":       {spec: s3 + "  isDefault: \"yes\"\n", ok: false, fields: []string{"spec.isDefault"}},
	} {
		t.Run(name, func(t *testing.T) {
			b, errs, ok := Backend(object(t, head+c.spec))
			if ok != c.ok {
				t.Fatalf("ok = %v, want %v (%v)", ok, c.ok, errs)
			}
			var fields []string
			for _, e := range errs {
				fields = append(fields, e.Field)
			}
			if diff := cmp.Diff(c.fields, fields); diff != "" {
				t.Errorf("fields (-want +got):\n%s\n%v", diff, errs)
			}
			if ok && b.Spec.S3.BucketURLFormat == "" {
				t.Error("the CRD's defaults were not applied")
			}
		})
	}
}

// The schema validator runs on a Glance: a CEL rule of the CRD holds at
// build time, in the API server's words.
func TestGlanceRunsTheCRDRules(t *testing.T) {
	_, errs, ok := Glance(object(t, `apiVersion: glance.openstack.c5c3.io/v1alpha1
kind: Glance
metadata: {name: glance, namespace: ns}
spec:
  openStackRelease: "2025.2"
  image: {repository: ghcr.io/c5c3/glance, tag: "2025.2"}
  database: {host: mariadb, database: glance, secretRef: {name: db}}
  cache: {servers: ["memcached:11211"]}
  keystoneEndpoint: not-a-url
  serviceUser: {secretRef: {name: s}}
`))
	if !ok || len(errs) == 0 {
		t.Fatalf("ok %v, errs %v: want the keystoneEndpoint rule", ok, errs)
	}
	if errs[0].Field != "spec.keystoneEndpoint" {
		t.Errorf("first error %v, want one on spec.keystoneEndpoint", errs[0])
	}
}

func TestDedupe(t *testing.T) {
	p := field.NewPath("spec", "s3", "host")
	errs := field.ErrorList{
		field.Invalid(field.NewPath("spec"), "x", "must be a URL"),
		field.Invalid(p, "x", "must be a URL"),
		field.Required(field.NewPath("spec", "type"), ""),
	}
	got := Dedupe(errs)
	var fields []string
	for _, e := range got {
		fields = append(fields, e.Field)
	}
	if diff := cmp.Diff([]string{"spec.s3.host", "spec.type"}, fields); diff != "" {
		t.Errorf("kept (-want +got):\n%s", diff)
	}
}

// kustomize's namePrefix/nameSuffix record the names an object had.
func TestPreviousNames(t *testing.T) {
	o := object(t, "apiVersion: glance.openstack.c5c3.io/v1alpha1\nkind: Glance\nmetadata:\n  name: p-glance\n  annotations: {internal.config.kubernetes.io/previousNames: 'glance,glance'}\n")
	if diff := cmp.Diff([]string{"glance", "glance"}, PreviousNames(o)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if got := PreviousNames(object(t, "kind: Glance\nmetadata: {name: g}")); got != nil {
		t.Errorf("no annotation: %q", got)
	}
}
