package glancekrm

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/yaml"
)

func controlPlaneInput(t *testing.T, edit func(string) string, extra ...string) []byte {
	t.Helper()
	cp, err := os.ReadFile("../../examples/controlplane/controlplane.yaml")
	if err != nil {
		t.Fatal(err)
	}
	docs := append([]string{edit(string(cp))}, extra...)
	return resourceList(t, []byte(strings.Join(docs, "\n---\n")))
}

// projected runs the function and returns kind/name of every item, and the
// names of the rendered ConfigMap and Secret.
func projected(t *testing.T, rl []byte) (items []string, configMap, secret string, results fn.Results, failed bool) {
	t.Helper()
	out, failed := runFn(t, rl)
	res, err := fn.ParseResourceList(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range res.Items {
		items = append(items, o.GetKind()+"/"+o.GetName())
		switch o.GetKind() {
		case "ConfigMap":
			configMap = o.GetName()
		case "Secret":
			secret = o.GetName()
		}
	}
	return items, configMap, secret, res.Results, failed
}

func same(s string) string { return s }

func TestControlPlaneProjection(t *testing.T) {
	items, cm, sec, results, failed := projected(t, controlPlaneInput(t, same))
	if failed {
		t.Fatalf("the function failed:\n%s", results)
	}
	// The projected Glance has no workload in the input, so it gets the
	// seed operator's, as the c5c3 ControlPlane's Glance gets the glance
	// operator's: its gateway gives it an HTTPRoute.
	jobOf := func(component string) string {
		i := slices.IndexFunc(items, func(s string) bool { return strings.HasPrefix(s, "Job/controlplane-glance-"+component+"-") })
		if i < 0 {
			t.Fatalf("no %s Job in %v", component, items)
		}
		return items[i]
	}
	want := []string{"ControlPlane/controlplane", "Glance/controlplane-glance", "GlanceBackend/controlplane-glance-default",
		"GlanceBackend/controlplane-glance-secondary", "ConfigMap/" + cm, "Secret/" + sec,
		"Deployment/controlplane-glance", jobOf("db-sync"), jobOf("db-contract"), "HTTPRoute/controlplane-glance", "PodDisruptionBudget/controlplane-glance", "Service/controlplane-glance"}
	if diff := cmp.Diff(want, items, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
		t.Errorf("items (-want +got):\n%s", diff)
	}

	flip := func(s string) string {
		s = strings.Replace(s, "isDefault: true", "isDefault: TMP", 1)
		s = strings.Replace(s, "isDefault: false", "isDefault: true", 1)
		return strings.Replace(s, "isDefault: TMP", "isDefault: false", 1)
	}
	_, cm2, sec2, results, failed := projected(t, controlPlaneInput(t, flip))
	if failed {
		t.Fatalf("flipped: the function failed:\n%s", results)
	}
	if cm2 == cm || sec2 != sec {
		t.Errorf("flipping the default in the ControlPlane: ConfigMap %s -> %s (must change), Secret %s -> %s (must not)", cm, cm2, sec, sec2)
	}
}

func TestControlPlaneRules(t *testing.T) {
	for name, tc := range map[string]struct {
		edit  func(string) string
		extra []string
		want  string
	}{
		"two defaults": {
			edit: func(s string) string { return strings.Replace(s, "isDefault: false", "isDefault: true", 1) },
			want: "exactly one backends entry must set isDefault",
		},
		"no default": {
			edit: func(s string) string { return strings.Replace(s, "isDefault: true", "isDefault: false", 1) },
			want: "exactly one backends entry must set isDefault",
		},
		"duplicate entry": {
			edit: func(s string) string { return strings.Replace(s, "- name: secondary", "- name: default", 1) },
			want: `duplicate backends entry "default"`,
		},
		"child name too long": {
			edit: func(s string) string {
				return strings.Replace(s, "- name: secondary", "- name: "+strings.Repeat("s", 240), 1)
			},
			want: "the child GlanceBackend CR name would be 260 bytes",
		},
		"a hand-written default on the projected Glance": {
			edit: same,
			extra: []string{`apiVersion: glance.openstack.c5c3.io/v1alpha1
kind: GlanceBackend
metadata: {name: controlplane-glance-manual, namespace: openstack}
spec:
  glanceRef: {name: controlplane-glance}
  type: S3
  isDefault: true
  s3: {host: https://s3.example, bucket: b, credentialsSecretRef: {name: c}}`},
			want: "GlanceBackend controlplane-glance-manual is written by hand and attached to Glance controlplane-glance, which ControlPlane controlplane projects: it is kept, but it cannot be the default store (the ControlPlane's default is controlplane-glance-default)",
		},
	} {
		t.Run(name, func(t *testing.T) {
			_, _, _, results, failed := projected(t, controlPlaneInput(t, tc.edit, tc.extra...))
			if !failed || !strings.Contains(results.String(), tc.want) {
				t.Errorf("want a failure containing %q; results:\n%s", tc.want, results)
			}
		})
	}
}

// A child removed from the ControlPlane disappears, a hand-written object
// with the children's prefix stays, and a second run on the output (kpt)
// changes nothing.
func TestControlPlaneChildrenFollowTheList(t *testing.T) {
	handWritten := `apiVersion: glance.openstack.c5c3.io/v1alpha1
kind: GlanceBackend
metadata: {name: controlplane-glance-manual, namespace: openstack}
spec:
  glanceRef: {name: controlplane-glance}
  type: S3
  s3: {host: https://s3.example, bucket: b, credentialsSecretRef: {name: c}}`
	out, failed := runFn(t, controlPlaneInput(t, same, handWritten))
	if failed {
		t.Fatalf("the function failed:\n%s", out)
	}
	again, failed := runFn(t, itemsOf(t, out))
	if failed {
		t.Fatalf("the second run failed:\n%s", again)
	}
	if diff := cmp.Diff(string(itemsOf(t, out)), string(itemsOf(t, again))); diff != "" {
		t.Errorf("a second run changed the output (-first +second):\n%s", diff)
	}
	// Drop the secondary entry from the ControlPlane in the output and run
	// again: its child goes, the hand-written one stays.
	rl, err := fn.ParseResourceList(itemsOf(t, out))
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range rl.Items {
		if o.GetKind() != "ControlPlane" {
			continue
		}
		entries, _, err := o.NestedSlice("spec", "services", "glance", "backends")
		if err != nil || len(entries) != 2 {
			t.Fatalf("backends of the ControlPlane in the output: %v, %v", entries, err)
		}
		var first map[string]any
		if err := entries[0].As(&first); err != nil {
			t.Fatal(err)
		}
		if err := o.SetNestedField([]any{first}, "spec", "services", "glance", "backends"); err != nil {
			t.Fatal(err)
		}
	}
	cut, err := rl.ToYAML()
	if err != nil {
		t.Fatal(err)
	}
	items, _, _, results, failed := projected(t, cut)
	if failed {
		t.Fatalf("the function failed:\n%s", results)
	}
	joined := strings.Join(items, " ")
	if strings.Contains(joined, "GlanceBackend/controlplane-glance-secondary") {
		t.Errorf("the child of the removed entry is still there: %v", items)
	}
	if !strings.Contains(joined, "GlanceBackend/controlplane-glance-manual") {
		t.Errorf("the hand-written GlanceBackend was dropped: %v", items)
	}
}

// TestConfigFilesFollowTheSpec: policy.yaml only with policyOverrides (its
// ConfigMap from the input; absent, an error naming it), logging.conf only
// for json, the uWSGI settings only from 2026.1.
func TestConfigFilesFollowTheSpec(t *testing.T) {
	policyCM := "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: policy, namespace: ns}\ndata:\n  policy.yaml: |\n    get_image: \"role:admin\"\n    delete_image: \"role:admin\"\n"
	for name, tc := range map[string]struct {
		release, extra, more string
		files                []string
		policy               map[string]string
		fails                string
	}{
		"defaults, eventlet": {release: "2025.2", files: []string{"glance-api-paste.ini", "glance-api.conf"}},
		"uwsgi from 2026.1":  {release: "2026.1", files: []string{"glance-api-paste.ini", "glance-api-uwsgi.ini", "glance-api.conf"}},
		"json logging": {release: "2025.2", extra: "  logging: {format: json, level: ERROR}",
			files: []string{"glance-api-paste.ini", "glance-api.conf", "logging.conf"}},
		"policy from the input's ConfigMap, inline rules win": {release: "2025.2",
			extra: "  policyOverrides: {configMapRef: {name: policy}, rules: {get_image: \"role:reader\"}}", more: policyCM,
			files:  []string{"glance-api-paste.ini", "glance-api.conf", "policy.yaml"},
			policy: map[string]string{"get_image": "role:reader", "delete_image": "role:admin"}},
		"policy ConfigMap not in the input": {release: "2025.2",
			extra: "  policyOverrides: {configMapRef: {name: policy}}",
			fails: "ConfigMap policy is not in the input: glance-krm merges its policy.yaml at build time"},
	} {
		t.Run(name, func(t *testing.T) {
			glance := strings.Replace(strings.Replace(testGlance, `openStackRelease: "2025.2"`, `openStackRelease: "`+tc.release+`"`, 1), `tag: "2025.2"`, `tag: "`+tc.release+`"`, 1) + tc.extra + "\n"
			in := glance + "---\n" + testBackend("primary", "glance", true) + tc.more
			out, failed := runFn(t, resourceList(t, []byte(in)))
			res, err := fn.ParseResourceList(out)
			if err != nil {
				t.Fatal(err)
			}
			if tc.fails != "" {
				if !failed || !strings.Contains(res.Results.String(), tc.fails) {
					t.Errorf("want a failure containing %q:\n%s", tc.fails, res.Results)
				}
				return
			}
			if failed {
				t.Fatalf("the function failed:\n%s", res.Results)
			}
			for _, o := range res.Items {
				if o.GetKind() != "ConfigMap" || o.GetName() == "policy" {
					continue
				}
				data, _, _ := o.NestedStringMap("data")
				var files []string
				for k := range data {
					files = append(files, k)
				}
				slices.Sort(files)
				if diff := cmp.Diff(tc.files, files); diff != "" {
					t.Errorf("files (-want +got):\n%s", diff)
				}
				if tc.policy != nil {
					var got map[string]string
					if err := yaml.Unmarshal([]byte(data["policy.yaml"]), &got); err != nil {
						t.Fatal(err)
					}
					if diff := cmp.Diff(tc.policy, got); diff != "" {
						t.Errorf("policy.yaml (-want +got):\n%s", diff)
					}
					if !strings.Contains(data["glance-api.conf"], "policy_file = /etc/glance/glance.conf.d/policy.yaml\n") {
						t.Errorf("glance-api.conf does not name policy.yaml:\n%s", data["glance-api.conf"])
					}
				}
			}
		})
	}
}
