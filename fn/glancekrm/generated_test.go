package glancekrm

import (
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/yaml"

	"github.com/c5c3/glance-krm/internal/fntest"
)

func controlPlaneInput(t *testing.T, edit func(string) string, extra ...string) []byte {
	t.Helper()
	cp, err := os.ReadFile("../../examples/controlplane/controlplane.yaml")
	if err != nil {
		t.Fatal(err)
	}
	docs := append([]string{edit(string(cp))}, extra...)
	return fntest.ResourceList(t, []byte(strings.Join(docs, "\n---\n")))
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
			glance := strings.Replace(strings.Replace(fntest.Glance, `openStackRelease: "2025.2"`, `openStackRelease: "`+tc.release+`"`, 1), `tag: "2025.2"`, `tag: "`+tc.release+`"`, 1) + tc.extra + "\n"
			in := glance + "---\n" + fntest.Backend("primary", "glance", true) + tc.more
			out, failed := runFn(t, fntest.ResourceList(t, []byte(in)))
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

// glanceWith is fntest.Glance with more spec fields.
func glanceWith(spec string) string { return fntest.Glance + spec }

const twoAPIs = `  apis:
  - name: default
  - name: next
    replicas: 1
    backends: [b]
    defaultBackend: b
`

// The generated set: what a Glance alone gets, what it keeps of the
// user's, and the several-APIs rules as build errors.
func TestGeneratedWorkload(t *testing.T) {
	cases := map[string]ownershipCase{
		"a Glance alone gets the seed operator's set": {
			input:   fntest.Docs(fntest.Glance, fntest.Backend("a", "glance", true)),
			results: []want{{fn.Info, "generated Job glance-db-sync-"}, {fn.Info, "Deployment glance, PodDisruptionBudget glance, Job glance-db-contract-"}},
			contains: []string{"kind: Deployment", "kind: PodDisruptionBudget", "kind: Service", "kind: Job", "name: glance-db-sync-", "name: glance-db-contract-",
				"argocd.argoproj.io/sync-wave: \"1\"", "path: /healthcheck", "runAsUser: 42424", "name: glance-krm-credentials"},
			absent: []string{"kind: HorizontalPodAutoscaler", "kind: NetworkPolicy", "kind: HTTPRoute", "kind: CronJob"},
		},
		"each optional field adds its object": {
			input: fntest.Docs(glanceWith(`  autoscaling: {maxReplicas: 5, targetCPUUtilization: 70}
  networkPolicy: {ingress: [{namespaceSelector: {matchLabels: {team: x}}}]}
  gateway: {parentRef: {name: gw}, hostname: image.example.com}
  dbPurge: {retentionDays: 7}
  imageCache: {}
`), fntest.Backend("a", "glance", true)),
			results:  []want{{fn.Info, "HorizontalPodAutoscaler glance"}},
			contains: []string{"kind: HorizontalPodAutoscaler", "kind: NetworkPolicy", "kind: HTTPRoute", "kind: CronJob", "name: glance-db-purge", "--age_in_days 7", "name: cache-maintenance", "glance-cache-pruner"},
			absent:   []string{"replicas: 3"}, // the HPA owns them
		},
		"verticalAutoscaling adds a VPA on requests only, placement goes onto the pod (the seed's newer DeploymentSpec)": {
			input: fntest.Docs(glanceWith(`  deployment:
    nodeSelector: {disk: ssd}
    tolerations: [{key: dedicated, operator: Equal, value: glance, effect: NoSchedule}]
    affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: zone, operator: In, values: [a]}]}]}}}
    verticalAutoscaling: {updateMode: Initial, minReplicas: 2, minAllowed: {cpu: 50m}, maxAllowed: {memory: 8Gi}}
`), fntest.Backend("a", "glance", true)),
			results: []want{{fn.Info, "VerticalPodAutoscaler glance"}},
			contains: []string{"kind: VerticalPodAutoscaler", "apiVersion: autoscaling.k8s.io/v1", "updateMode: Initial", "minReplicas: 2",
				"controlledValues: RequestsOnly", "containerName: '*'", "controlledResources:", "cpu: 50m", "memory: 8Gi",
				"disk: ssd", "value: glance", "operator: In"},
			absent: []string{"kind: HorizontalPodAutoscaler"},
		},
		"an application credential service user: auth_type v3applicationcredential, no user or scope, its id and secret from its Secret": {
			input: fntest.Docs(strings.Replace(fntest.Glance, "serviceUser: {secretRef: {name: svc}}", "serviceUser: {secretRef: {name: svc}, applicationCredential: {secretRef: {name: glance-ac}}}", 1), fntest.Backend("a", "glance", true)),
			contains: []string{"auth_type = v3applicationcredential", "username =\n", "project_name =\n", "user_domain_name =\n", "project_domain_name =\n",
				"key: AC_ID", "path: required/keystone_authtoken/application_credential_id",
				"key: AC_SECRET", "path: required/keystone_authtoken/application_credential_secret", "name: glance-ac"},
			absent: []string{"auth_type = password", "name: svc\n", "path: required/keystone_authtoken/password"},
		},
		"autoscaling.behavior is copied into the HPA": {
			input:    fntest.Docs(glanceWith("  autoscaling: {maxReplicas: 5, targetCPUUtilization: 150, behavior: {scaleDown: {stabilizationWindowSeconds: 600}}}\n"), fntest.Backend("a", "glance", true)),
			contains: []string{"kind: HorizontalPodAutoscaler", "averageUtilization: 150", "stabilizationWindowSeconds: 600"},
			absent:   []string{"kind: VerticalPodAutoscaler"},
		},
		"a VPA beside the HPA is refused": {
			input:   fntest.Docs(glanceWith("  autoscaling: {maxReplicas: 5, targetCPUUtilization: 70}\n  deployment: {verticalAutoscaling: {updateMode: \"Off\"}}\n"), fntest.Backend("a", "glance", true)),
			results: []want{{fn.Error, "spec.deployment.verticalAutoscaling cannot be set while spec.autoscaling scales the same Deployment"}},
			absent:  []string{"kind: Deployment"},
		},
		"a hand-written workload is wired and nothing is generated": {
			input:   fntest.Docs(fntest.Glance, fntest.Backend("a", "glance", true), fntest.Workload("glance", "", plainContainer)),
			results: []want{{fn.Info, "wired Deployment glance"}},
			absent:  []string{"kind: Job", "kind: PodDisruptionBudget", "kind: Service"},
		},
		"an object the user wrote is kept, not generated": {
			input: fntest.Docs(fntest.Glance, fntest.Backend("a", "glance", true), `apiVersion: v1
kind: Service
metadata: {name: glance, namespace: ns}
spec: {ports: [{port: 80}], selector: {mine: "yes"}}
`),
			results:   []want{{fn.Info, "the input holds Service glance: it is kept as written"}},
			unchanged: []string{"Service/glance"},
			contains:  []string{"kind: Deployment"},
		},
		"workloads: none renders the files only": {
			input:   fntest.Docs(fntest.Glance, fntest.Backend("a", "glance", true)),
			config:  "apiVersion: fn.glance.openstack.c5c3.io/v1alpha1\nkind: RenderGlanceConfig\nmetadata: {name: c}\nspec: {workloads: none}\n",
			results: []want{{fn.Warning, "workload generation is off"}},
			absent:  []string{"kind: Deployment", "kind: Job"},
		},
		"an unknown workloads value is refused as a value, and nothing is rendered": {
			input:   fntest.Docs(fntest.Glance, fntest.Backend("a", "glance", true)),
			config:  "apiVersion: fn.glance.openstack.c5c3.io/v1alpha1\nkind: RenderGlanceConfig\nmetadata: {name: c}\nspec: {workloads: some}\n",
			results: []want{{fn.Error, `functionConfig field spec.workloads: "some" is not supported: use generate (the default) or none`}},
			absent:  []string{"kind: Deployment", "kind: ConfigMap", "kind: Secret"},
		},
		"an unknown field is not understood, and nothing is rendered": {
			input:   fntest.Docs(fntest.Glance, fntest.Backend("a", "glance", true)),
			config:  "apiVersion: fn.glance.openstack.c5c3.io/v1alpha1\nkind: RenderGlanceConfig\nmetadata: {name: c}\nspec: {workload: none}\n",
			results: []want{{fn.Error, "functionConfig field spec.workload is not understood (known: spec.credentialsImage, spec.workloads)"}},
			absent:  []string{"kind: Deployment", "kind: ConfigMap"},
		},
		"a credentialsImage that is no image reference is refused": {
			input:   fntest.Docs(fntest.Glance, fntest.Backend("a", "glance", true)),
			config:  "apiVersion: fn.glance.openstack.c5c3.io/v1alpha1\nkind: RenderGlanceConfig\nmetadata: {name: c}\nspec: {credentialsImage: 'mirror.example/Glance-KRM-fn:v1'}\n",
			results: []want{{fn.Error, `functionConfig field spec.credentialsImage: the credentials init container's image "mirror.example/Glance-KRM-fn:v1" is not a valid image reference`}},
			absent:  []string{"kind: Deployment"},
		},
		"a known field that is not a string": {
			input:   fntest.Docs(fntest.Glance, fntest.Backend("a", "glance", true)),
			config:  "apiVersion: fn.glance.openstack.c5c3.io/v1alpha1\nkind: RenderGlanceConfig\nmetadata: {name: c}\nspec: {workloads: [none]}\n",
			results: []want{{fn.Error, "functionConfig field spec.workloads: must be a string"}},
		},
		"a mirrored credentialsImage pinned by digest is used": {
			input:    fntest.Docs(fntest.Glance, fntest.Backend("a", "glance", true)),
			config:   "apiVersion: fn.glance.openstack.c5c3.io/v1alpha1\nkind: RenderGlanceConfig\nmetadata: {name: c}\nspec: {credentialsImage: 'mirror.example:5000/c5c3/glance-krm-fn@sha256:" + strings.Repeat("a", 64) + "'}\n",
			contains: []string{"image: mirror.example:5000/c5c3/glance-krm-fn@sha256:" + strings.Repeat("a", 64)},
		},
		"two APIs: a Deployment, PDB and Service each, one stable Service": {
			input:   fntest.Docs(glanceWith(twoAPIs), fntest.Backend("a", "glance", true), fntest.Backend("b", "glance", false)),
			results: []want{{fn.Info, "API next: stores b (default b)"}, {fn.Info, "catalog API default"}},
			contains: []string{"name: glance-next", "name: glance-default", "glance.openstack.c5c3.io/api: next",
				"app.kubernetes.io/instance: glance-next"},
		},
		"an API store that is not attached": {
			input:   fntest.Docs(glanceWith("  apis: [{name: default, backends: [a, gone]}]\n"), fntest.Backend("a", "glance", true)),
			results: []want{{fn.Error, `spec.apis[0].backends[1]: Invalid value: "gone": no GlanceBackend named "gone" is attached`}},
			absent:  []string{"kind: Deployment"},
		},
		"an API without the default store and no default of its own": {
			input:   fntest.Docs(glanceWith("  apis: [{name: default}, {name: next, backends: [b]}]\n"), fntest.Backend("a", "glance", true), fntest.Backend("b", "glance", false)),
			results: []want{{fn.Error, `API "next" has no default store`}},
		},
		"the catalog API must exist": {
			input:   fntest.Docs(glanceWith("  apis: [{name: next}]\n"), fntest.Backend("a", "glance", true)),
			results: []want{{fn.Error, "spec.catalogAPI must name an API of spec.apis"}},
		},
		"the last API cannot be removed": {
			input:   fntest.Docs(glanceWith("  apis: []\n"), fntest.Backend("a", "glance", true)),
			results: []want{{fn.Error, "spec.apis"}},
		},
		"a hand-written workload that serves no API": {
			input:   fntest.Docs(glanceWith(twoAPIs), fntest.Backend("a", "glance", true), fntest.Backend("b", "glance", false), fntest.Workload("other", ", labels: {glance.openstack.c5c3.io/glance: glance}", plainContainer)),
			results: []want{{fn.Error, "Deployment other belongs to Glance \"glance\" but serves none of its APIs (default, next)"}},
		},
		"a hand-written workload per API by name is wired with that API's files": {
			input:   fntest.Docs(glanceWith(twoAPIs), fntest.Backend("a", "glance", true), fntest.Backend("b", "glance", false), fntest.Workload("glance", "", plainContainer), fntest.Workload("glance-next", ", labels: {glance.openstack.c5c3.io/glance: glance}", plainContainer)),
			results: []want{{fn.Info, "wired Deployment glance, Deployment glance-next"}},
			absent:  []string{"kind: Job"},
		},
		"signature verification renders barbican through the internal Identity endpoint": {
			input:    fntest.Docs(glanceWith("  imageSignatureVerification: {enabled: true}\n"), fntest.Backend("a", "glance", true)),
			contains: []string{"[key_manager]\n    backend = barbican", "[barbican]\n    auth_endpoint = http://keystone:5000/v3\n    barbican_endpoint_type = internal"},
		},
		"a policy override opening metadef writes is refused": {
			input:   fntest.Docs(glanceWith("  policyOverrides: {rules: {add_metadef_namespace: \"role:member\"}}\n"), fntest.Backend("a", "glance", true)),
			results: []want{{fn.Error, `metadef write rule "add_metadef_namespace" is open to callers without the admin role`}},
			absent:  []string{"kind: Deployment"},
		},
		"metadefWrites: PolicyOverrides lets it through with a warning": {
			input:    fntest.Docs(glanceWith("  metadefWrites: PolicyOverrides\n  policyOverrides: {rules: {metadef_admin: \"role:member\"}}\n"), fntest.Backend("a", "glance", true)),
			results:  []want{{fn.Warning, `metadef write rule "delete_metadef_tags" is open`}},
			contains: []string{"metadef_admin: role:member"},
		},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) { runCase(t, c) })
	}
}

// TestJobNameFollowsItsSpec: the db-sync Job is renamed (so it runs
// again) by a new image, and keeps its name when nothing it runs changes.
func TestJobNameFollowsItsSpec(t *testing.T) {
	job := func(input string) string {
		rl, failed := runFnOn(t, input)
		if failed {
			t.Fatalf("failed: %v", rl.Results)
		}
		for _, o := range rl.Items {
			if o.GetKind() == "Job" {
				return o.GetName()
			}
		}
		t.Fatal("no Job")
		return ""
	}
	base := fntest.Docs(fntest.Glance, fntest.Backend("a", "glance", true))
	first := job(base)
	if again := job(base); again != first {
		t.Errorf("the same input named the Job %s, then %s", first, again)
	}
	if replicas := job(fntest.Docs(glanceWith("  deployment: {replicas: 5}\n"), fntest.Backend("a", "glance", true))); replicas != first {
		t.Errorf("a replica count renamed the Job: %s -> %s", first, replicas)
	}
	if newImage := job(strings.Replace(base, `tag: "2025.2"`, `tag: "2025.2-p1"`, 1)); newImage == first {
		t.Errorf("a new image kept the Job name %s: db sync would not run again", first)
	}
}

// TestUpgradeJobs: Glance's rolling upgrade as two Jobs. db-sync expands
// and migrates before the Deployments (wave 0) and never runs the offline
// `db sync`; db-contract runs after every generated Deployment (wave 2,
// kpt's depends-on naming each), in the jobs' NetworkPolicy, renamed
// (so rerun) by a new image.
func TestUpgradeJobs(t *testing.T) {
	jobs := func(input string) (map[string]*fn.KubeObject, []*fn.KubeObject) {
		rl, failed := runFnOn(t, input)
		if failed {
			t.Fatalf("failed: %v", rl.Results)
		}
		byComponent := map[string]*fn.KubeObject{}
		var policies []*fn.KubeObject
		for _, o := range rl.Items {
			switch o.GetKind() {
			case "Job":
				byComponent[o.GetLabel("app.kubernetes.io/component")] = o
			case "NetworkPolicy":
				policies = append(policies, o)
			}
		}
		return byComponent, policies
	}
	// The script is the one line of the object that runs glance-manage.
	script := func(j *fn.KubeObject) string {
		for line := range strings.Lines(j.String()) {
			if strings.Contains(line, "glance-manage") {
				return strings.TrimSpace(line)
			}
		}
		return ""
	}
	input := fntest.Docs(glanceWith(twoAPIs+`  networkPolicy: {ingress: [{namespaceSelector: {matchLabels: {team: x}}}]}
`), fntest.Backend("a", "glance", true), fntest.Backend("b", "glance", false))
	js, policies := jobs(input)
	sync, contract := js["db-sync"], js["db-contract"]
	if sync == nil || contract == nil {
		t.Fatalf("want a db-sync and a db-contract Job, got %v", slices.Collect(maps.Keys(js)))
	}
	// The offline db sync contracts: only an empty database (no alembic
	// head, so no pod of an older release reads it) takes it, before
	// expand and migrate, which then have nothing left to do.
	s := script(sync)
	guard := regexp.MustCompile(`^- if glance-manage [^|]* db version \| grep -q 'not under migration control'; then glance-manage [^;]* db sync; fi && `)
	rest := guard.ReplaceAllString(s, "")
	if rest == s || !strings.Contains(rest, " db expand && ") || !strings.Contains(rest, " db migrate && ") || strings.Contains(rest, "db sync") {
		t.Errorf("db-sync runs %q, want db sync on an empty database alone, then db expand and db migrate", s)
	}
	if c := script(contract); !strings.HasSuffix(c, " db contract") || strings.Contains(c, "expand") {
		t.Errorf("db-contract runs %q, want db contract alone", c)
	}
	if w := sync.GetAnnotation("argocd.argoproj.io/sync-wave"); w != "0" {
		t.Errorf("db-sync in wave %q, want 0", w)
	}
	if w := contract.GetAnnotation("argocd.argoproj.io/sync-wave"); w != "2" {
		t.Errorf("db-contract in wave %q, want 2 (after the Deployments' 1)", w)
	}
	want := "apps/namespaces/ns/Deployment/glance,apps/namespaces/ns/Deployment/glance-next"
	if d := contract.GetAnnotation("config.kubernetes.io/depends-on"); d != want {
		t.Errorf("db-contract depends-on %q, want %q", d, want)
	}
	covered := false
	for _, p := range policies {
		if p.GetName() == "glance-jobs" {
			covered = strings.Contains(p.String(), "- db-contract")
		}
	}
	if !covered {
		t.Error("the NetworkPolicy glance-jobs does not select the db-contract pod")
	}
	again, _ := jobs(strings.Replace(input, `tag: "2025.2"`, `tag: "2025.2-p1"`, 1))
	if again["db-contract"].GetName() == contract.GetName() {
		t.Errorf("a new image kept the contract Job's name %s: it would not run again", contract.GetName())
	}
}

func runFnOn(t *testing.T, input string) (*fn.ResourceList, bool) {
	t.Helper()
	out, failed := runFn(t, fntest.ResourceList(t, []byte(input)))
	rl, err := fn.ParseResourceList(out)
	if err != nil {
		t.Fatal(err)
	}
	return rl, failed
}
