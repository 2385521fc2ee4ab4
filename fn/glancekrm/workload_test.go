package glancekrm

import (
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/kptdev/krm-functions-sdk/go/fn"
)

// glanceWith is testGlance with more spec fields.
func glanceWith(spec string) string { return testGlance + spec }

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
			input:   docs(testGlance, testBackend("a", "glance", true)),
			results: []want{{fn.Info, "generated Job glance-db-sync-"}, {fn.Info, "Deployment glance, PodDisruptionBudget glance, Job glance-db-contract-"}},
			contains: []string{"kind: Deployment", "kind: PodDisruptionBudget", "kind: Service", "kind: Job", "name: glance-db-sync-", "name: glance-db-contract-",
				"argocd.argoproj.io/sync-wave: \"1\"", "path: /healthcheck", "runAsUser: 42424", "name: glance-krm-credentials"},
			absent: []string{"kind: HorizontalPodAutoscaler", "kind: NetworkPolicy", "kind: HTTPRoute", "kind: CronJob"},
		},
		"each optional field adds its object": {
			input: docs(glanceWith(`  autoscaling: {maxReplicas: 5, targetCPUUtilization: 70}
  networkPolicy: {ingress: [{namespaceSelector: {matchLabels: {team: x}}}]}
  gateway: {parentRef: {name: gw}, hostname: image.example.com}
  dbPurge: {retentionDays: 7}
  imageCache: {}
`), testBackend("a", "glance", true)),
			results:  []want{{fn.Info, "HorizontalPodAutoscaler glance"}},
			contains: []string{"kind: HorizontalPodAutoscaler", "kind: NetworkPolicy", "kind: HTTPRoute", "kind: CronJob", "name: glance-db-purge", "--age_in_days 7", "name: cache-maintenance", "glance-cache-pruner"},
			absent:   []string{"replicas: 3"}, // the HPA owns them
		},
		"verticalAutoscaling adds a VPA on requests only, placement goes onto the pod (the seed's newer DeploymentSpec)": {
			input: docs(glanceWith(`  deployment:
    nodeSelector: {disk: ssd}
    tolerations: [{key: dedicated, operator: Equal, value: glance, effect: NoSchedule}]
    affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: zone, operator: In, values: [a]}]}]}}}
    verticalAutoscaling: {updateMode: Initial, minReplicas: 2, minAllowed: {cpu: 50m}, maxAllowed: {memory: 8Gi}}
`), testBackend("a", "glance", true)),
			results: []want{{fn.Info, "VerticalPodAutoscaler glance"}},
			contains: []string{"kind: VerticalPodAutoscaler", "apiVersion: autoscaling.k8s.io/v1", "updateMode: Initial", "minReplicas: 2",
				"controlledValues: RequestsOnly", "containerName: '*'", "controlledResources:", "cpu: 50m", "memory: 8Gi",
				"disk: ssd", "value: glance", "operator: In"},
			absent: []string{"kind: HorizontalPodAutoscaler"},
		},
		"an application credential service user: auth_type v3applicationcredential, no user or scope, its id and secret from its Secret": {
			input: docs(strings.Replace(testGlance, "serviceUser: {secretRef: {name: svc}}", "serviceUser: {secretRef: {name: svc}, applicationCredential: {secretRef: {name: glance-ac}}}", 1), testBackend("a", "glance", true)),
			contains: []string{"auth_type = v3applicationcredential", "username =\n", "project_name =\n", "user_domain_name =\n", "project_domain_name =\n",
				"key: AC_ID", "path: required/keystone_authtoken/application_credential_id",
				"key: AC_SECRET", "path: required/keystone_authtoken/application_credential_secret", "name: glance-ac"},
			absent: []string{"auth_type = password", "name: svc\n", "path: required/keystone_authtoken/password"},
		},
		"autoscaling.behavior is copied into the HPA": {
			input:    docs(glanceWith("  autoscaling: {maxReplicas: 5, targetCPUUtilization: 150, behavior: {scaleDown: {stabilizationWindowSeconds: 600}}}\n"), testBackend("a", "glance", true)),
			contains: []string{"kind: HorizontalPodAutoscaler", "averageUtilization: 150", "stabilizationWindowSeconds: 600"},
			absent:   []string{"kind: VerticalPodAutoscaler"},
		},
		"a VPA beside the HPA is refused": {
			input:   docs(glanceWith("  autoscaling: {maxReplicas: 5, targetCPUUtilization: 70}\n  deployment: {verticalAutoscaling: {updateMode: \"Off\"}}\n"), testBackend("a", "glance", true)),
			results: []want{{fn.Error, "spec.deployment.verticalAutoscaling cannot be set while spec.autoscaling scales the same Deployment"}},
			absent:  []string{"kind: Deployment"},
		},
		"a hand-written workload is wired and nothing is generated": {
			input:   docs(testGlance, testBackend("a", "glance", true), testWorkload("glance", "", plainContainer)),
			results: []want{{fn.Info, "wired Deployment glance"}},
			absent:  []string{"kind: Job", "kind: PodDisruptionBudget", "kind: Service"},
		},
		"an object the user wrote is kept, not generated": {
			input: docs(testGlance, testBackend("a", "glance", true), `apiVersion: v1
kind: Service
metadata: {name: glance, namespace: ns}
spec: {ports: [{port: 80}], selector: {mine: "yes"}}
`),
			results:   []want{{fn.Info, "the input holds Service glance: it is kept as written"}},
			unchanged: []string{"Service/glance"},
			contains:  []string{"kind: Deployment"},
		},
		"workloads: none renders the files only": {
			input:   docs(testGlance, testBackend("a", "glance", true)),
			config:  "apiVersion: fn.glance.openstack.c5c3.io/v1alpha1\nkind: RenderGlanceConfig\nmetadata: {name: c}\nspec: {workloads: none}\n",
			results: []want{{fn.Warning, "workload generation is off"}},
			absent:  []string{"kind: Deployment", "kind: Job"},
		},
		"an unknown workloads value is refused as a value, and nothing is rendered": {
			input:   docs(testGlance, testBackend("a", "glance", true)),
			config:  "apiVersion: fn.glance.openstack.c5c3.io/v1alpha1\nkind: RenderGlanceConfig\nmetadata: {name: c}\nspec: {workloads: some}\n",
			results: []want{{fn.Error, `functionConfig field spec.workloads: "some" is not supported: use generate (the default) or none`}},
			absent:  []string{"kind: Deployment", "kind: ConfigMap", "kind: Secret"},
		},
		"an unknown field is not understood, and nothing is rendered": {
			input:   docs(testGlance, testBackend("a", "glance", true)),
			config:  "apiVersion: fn.glance.openstack.c5c3.io/v1alpha1\nkind: RenderGlanceConfig\nmetadata: {name: c}\nspec: {workload: none}\n",
			results: []want{{fn.Error, "functionConfig field spec.workload is not understood (known: spec.credentialsImage, spec.workloads)"}},
			absent:  []string{"kind: Deployment", "kind: ConfigMap"},
		},
		"a credentialsImage that is no image reference is refused": {
			input:   docs(testGlance, testBackend("a", "glance", true)),
			config:  "apiVersion: fn.glance.openstack.c5c3.io/v1alpha1\nkind: RenderGlanceConfig\nmetadata: {name: c}\nspec: {credentialsImage: 'mirror.example/Glance-KRM-fn:v1'}\n",
			results: []want{{fn.Error, `functionConfig field spec.credentialsImage: the credentials init container's image "mirror.example/Glance-KRM-fn:v1" is not a valid image reference`}},
			absent:  []string{"kind: Deployment"},
		},
		"a known field that is not a string": {
			input:   docs(testGlance, testBackend("a", "glance", true)),
			config:  "apiVersion: fn.glance.openstack.c5c3.io/v1alpha1\nkind: RenderGlanceConfig\nmetadata: {name: c}\nspec: {workloads: [none]}\n",
			results: []want{{fn.Error, "functionConfig field spec.workloads: must be a string"}},
		},
		"a mirrored credentialsImage pinned by digest is used": {
			input:    docs(testGlance, testBackend("a", "glance", true)),
			config:   "apiVersion: fn.glance.openstack.c5c3.io/v1alpha1\nkind: RenderGlanceConfig\nmetadata: {name: c}\nspec: {credentialsImage: 'mirror.example:5000/c5c3/glance-krm-fn@sha256:" + strings.Repeat("a", 64) + "'}\n",
			contains: []string{"image: mirror.example:5000/c5c3/glance-krm-fn@sha256:" + strings.Repeat("a", 64)},
		},
		"two APIs: a Deployment, PDB and Service each, one stable Service": {
			input:   docs(glanceWith(twoAPIs), testBackend("a", "glance", true), testBackend("b", "glance", false)),
			results: []want{{fn.Info, "API next: stores b (default b)"}, {fn.Info, "catalog API default"}},
			contains: []string{"name: glance-next", "name: glance-default", "glance.openstack.c5c3.io/api: next",
				"app.kubernetes.io/instance: glance-next"},
		},
		"an API store that is not attached": {
			input:   docs(glanceWith("  apis: [{name: default, backends: [a, gone]}]\n"), testBackend("a", "glance", true)),
			results: []want{{fn.Error, `spec.apis[0].backends[1]: Invalid value: "gone": no GlanceBackend named "gone" is attached`}},
			absent:  []string{"kind: Deployment"},
		},
		"an API without the default store and no default of its own": {
			input:   docs(glanceWith("  apis: [{name: default}, {name: next, backends: [b]}]\n"), testBackend("a", "glance", true), testBackend("b", "glance", false)),
			results: []want{{fn.Error, `API "next" has no default store`}},
		},
		"the catalog API must exist": {
			input:   docs(glanceWith("  apis: [{name: next}]\n"), testBackend("a", "glance", true)),
			results: []want{{fn.Error, "spec.catalogAPI must name an API of spec.apis"}},
		},
		"the last API cannot be removed": {
			input:   docs(glanceWith("  apis: []\n"), testBackend("a", "glance", true)),
			results: []want{{fn.Error, "spec.apis"}},
		},
		"a hand-written workload that serves no API": {
			input:   docs(glanceWith(twoAPIs), testBackend("a", "glance", true), testBackend("b", "glance", false), testWorkload("other", ", labels: {glance.openstack.c5c3.io/glance: glance}", plainContainer)),
			results: []want{{fn.Error, "Deployment other belongs to Glance \"glance\" but serves none of its APIs (default, next)"}},
		},
		"a hand-written workload per API by name is wired with that API's files": {
			input:   docs(glanceWith(twoAPIs), testBackend("a", "glance", true), testBackend("b", "glance", false), testWorkload("glance", "", plainContainer), testWorkload("glance-next", ", labels: {glance.openstack.c5c3.io/glance: glance}", plainContainer)),
			results: []want{{fn.Info, "wired Deployment glance, Deployment glance-next"}},
			absent:  []string{"kind: Job"},
		},
		"signature verification renders barbican through the internal Identity endpoint": {
			input:    docs(glanceWith("  imageSignatureVerification: {enabled: true}\n"), testBackend("a", "glance", true)),
			contains: []string{"[key_manager]\n    backend = barbican", "[barbican]\n    auth_endpoint = http://keystone:5000/v3\n    barbican_endpoint_type = internal"},
		},
		"a policy override opening metadef writes is refused": {
			input:   docs(glanceWith("  policyOverrides: {rules: {add_metadef_namespace: \"role:member\"}}\n"), testBackend("a", "glance", true)),
			results: []want{{fn.Error, `metadef write rule "add_metadef_namespace" is open to callers without the admin role`}},
			absent:  []string{"kind: Deployment"},
		},
		"metadefWrites: PolicyOverrides lets it through with a warning": {
			input:    docs(glanceWith("  metadefWrites: PolicyOverrides\n  policyOverrides: {rules: {metadef_admin: \"role:member\"}}\n"), testBackend("a", "glance", true)),
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
	base := docs(testGlance, testBackend("a", "glance", true))
	first := job(base)
	if again := job(base); again != first {
		t.Errorf("the same input named the Job %s, then %s", first, again)
	}
	if replicas := job(docs(glanceWith("  deployment: {replicas: 5}\n"), testBackend("a", "glance", true))); replicas != first {
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
	input := docs(glanceWith(twoAPIs+`  networkPolicy: {ingress: [{namespaceSelector: {matchLabels: {team: x}}}]}
`), testBackend("a", "glance", true), testBackend("b", "glance", false))
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
	out, failed := runFn(t, resourceList(t, []byte(input)))
	rl, err := fn.ParseResourceList(out)
	if err != nil {
		t.Fatal(err)
	}
	return rl, failed
}
