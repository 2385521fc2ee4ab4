package glancekrm

import (
	"bytes"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/kptdev/krm-functions-sdk/go/fn"

	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

// drainingBackend is testBackend with the drain-to annotation.
func drainingBackend(name, to string, isDefault bool) string {
	return strings.Replace(testBackend(name, "glance", isDefault), "metadata: {name: "+name+", namespace: ns}",
		"metadata: {name: "+name+", namespace: ns, annotations: {glance.openstack.c5c3.io/drain-to: "+to+"}}", 1)
}

// TestStoreDrainJob: a backend's drain-to annotation generates the drain
// of that store: its Job (through the Service of the API that serves both
// stores, after the Deployments, no release annotation: it migrates no
// schema), the script's immutable ConfigMap, the service account that may
// write exactly the drain's record, and with spec.networkPolicy the drain
// pods' policy, which every API's policy admits. A second run changes
// nothing.
func TestStoreDrainJob(t *testing.T) {
	input := docs(glanceWith(twoAPIs+`  networkPolicy: {ingress: [{namespaceSelector: {matchLabels: {team: x}}}]}
`), drainingBackend("a", "b", false), testBackend("b", "glance", true))
	rl, failed := runFnOn(t, input)
	if failed {
		t.Fatalf("failed: %v", rl.Results)
	}
	var job, script, role *fn.KubeObject
	var policies []*fn.KubeObject
	for _, o := range rl.Items {
		switch {
		case o.GetKind() == "Job" && o.GetLabel("app.kubernetes.io/component") == "store-drain":
			job = o
		case o.GetKind() == "ConfigMap" && strings.HasPrefix(o.GetName(), "glance-store-drain-script-"):
			script = o
		case o.GetKind() == "Role" && o.GetName() == "glance-store-drain":
			role = o
		case o.GetKind() == "NetworkPolicy":
			policies = append(policies, o)
		}
	}
	if job == nil || script == nil || role == nil {
		t.Fatalf("want the drain Job, its script and its Role; items: %v", names(rl.Items))
	}
	if !strings.HasPrefix(job.GetName(), "glance-store-drain-a-") {
		t.Errorf("Job %s, want glance-store-drain-a-<hash>", job.GetName())
	}
	y := job.String()
	for _, want := range []string{"- /var/lib/glance-krm/store-drain/drain.py\n        - a\n        - b\n",
		"value: http://glance-default.ns.svc:9292", "value: glance-store-drain-a\n", "serviceAccountName: glance-store-drain",
		"name: " + script.GetName()} {
		if !strings.Contains(y, want) {
			t.Errorf("the drain Job lacks %q:\n%s", want, y)
		}
	}
	if job.GetAnnotation(v1alpha1.AnnotationRelease) != "" {
		t.Error("the drain Job carries the openstack-release annotation: the controller would take it for a schema migration")
	}
	if w, d := job.GetAnnotation("argocd.argoproj.io/sync-wave"), job.GetAnnotation("config.kubernetes.io/depends-on"); w != "2" ||
		d != "apps/namespaces/ns/Deployment/glance,apps/namespaces/ns/Deployment/glance-next" {
		t.Errorf("wave %q depends-on %q: want 2, after every Deployment", w, d)
	}
	embedded, err := os.ReadFile("workload/drain.py")
	if err != nil {
		t.Fatal(err)
	}
	if got, _, _ := script.NestedString("data", "drain.py"); got != string(embedded) {
		t.Error("the script ConfigMap does not hold workload/drain.py")
	}
	if imm, _, _ := script.NestedBool("immutable"); !imm {
		t.Error("the script ConfigMap is not immutable")
	}
	if r := role.String(); !strings.Contains(r, "resourceNames:\n  - glance-store-drain-a\n  resources:\n  - configmaps\n  verbs:\n  - get\n  - update\n") {
		t.Errorf("the Role does not limit updates to the record:\n%s", r)
	}
	admitted := 0
	var own *fn.KubeObject
	for _, p := range policies {
		if p.GetName() == "glance-store-drain" {
			own = p
		} else if strings.Contains(p.String(), "app.kubernetes.io/component: store-drain") {
			admitted++
		}
	}
	if own == nil || !strings.Contains(own.String(), "port: 9292") || !strings.Contains(own.String(), "port: 6443") {
		t.Errorf("no drain NetworkPolicy reaching the API and the API server: %v", own)
	}
	if admitted != 2 {
		t.Errorf("%d API policies admit the drain pods, want both (glance, glance-next)", admitted)
	}

	again, failed := runFn(t, itemsOf(t, mustYAML(t, rl)))
	if failed || !bytes.Equal(itemsOf(t, again), itemsOf(t, mustYAML(t, rl))) {
		t.Error("a second run on its own output changed it")
	}

	// Without the annotation, no drain object.
	rl, _ = runFnOn(t, docs(glanceWith(twoAPIs), testBackend("a", "glance", false), testBackend("b", "glance", true)))
	if i := slices.IndexFunc(rl.Items, func(o *fn.KubeObject) bool { return strings.Contains(o.GetName(), "store-drain") }); i >= 0 {
		t.Errorf("no drain asked for, yet %s %s", rl.Items[i].GetKind(), rl.Items[i].GetName())
	}
}

// TestStoreDrainRefused: a drain into a store the Glance does not have,
// or through no API that serves both, is an error on the GlanceBackend at
// its annotation, and nothing is rendered.
func TestStoreDrainRefused(t *testing.T) {
	for name, tc := range map[string]struct{ input, says string }{
		"an unknown target": {docs(testGlance, drainingBackend("a", "elsewhere", false), testBackend("b", "glance", true)), `"elsewhere"`},
		"no API serves both": {docs(glanceWith(`  apis:
  - name: default
    backends: [a]
    defaultBackend: a
  - name: next
    backends: [b]
    defaultBackend: b
`), drainingBackend("a", "b", true), testBackend("b", "glance", false)), `no Image API of the Glance serves both "a" and "b"`},
	} {
		t.Run(name, func(t *testing.T) {
			rl, failed := runFnOn(t, tc.input)
			if !failed {
				t.Fatal("the function passed")
			}
			i := slices.IndexFunc(rl.Results, func(r *fn.Result) bool {
				return r.Severity == fn.Error && strings.Contains(r.Message, tc.says) && r.ResourceRef != nil && r.ResourceRef.Name == "a" &&
					r.Field != nil && r.Field.Path == "metadata.annotations[glance.openstack.c5c3.io/drain-to]"
			})
			if i < 0 {
				t.Errorf("no error on GlanceBackend a at its annotation saying %q: %v", tc.says, rl.Results)
			}
			if slices.ContainsFunc(rl.Items, func(o *fn.KubeObject) bool { return o.GetKind() == "Job" }) {
				t.Error("a Job was rendered for a refused Glance")
			}
		})
	}
}

func mustYAML(t *testing.T, rl *fn.ResourceList) []byte {
	t.Helper()
	b, err := rl.ToYAML()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func names(objs fn.KubeObjects) []string {
	out := make([]string, len(objs))
	for i, o := range objs {
		out[i] = o.GetKind() + "/" + o.GetName()
	}
	return out
}
