package glancekrm

import (
	"bytes"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"

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
	var job, script, role, record *fn.KubeObject
	var policies []*fn.KubeObject
	for _, o := range rl.Items {
		switch {
		case o.GetKind() == "Job" && o.GetLabel("app.kubernetes.io/component") == "store-drain":
			job = o
		case o.GetKind() == "ConfigMap" && strings.HasPrefix(o.GetName(), "glance-store-drain-script-"):
			script = o
		case o.GetKind() == "ConfigMap" && o.GetName() == "glance-store-drain-a":
			record = o
		case o.GetKind() == "Role" && o.GetName() == "glance-store-drain":
			role = o
		case o.GetKind() == "NetworkPolicy":
			policies = append(policies, o)
		}
	}
	if job == nil || script == nil || role == nil || record == nil {
		t.Fatalf("want the drain Job, its script, its Role and its record; items: %v", names(rl.Items))
	}
	if !strings.HasPrefix(job.GetName(), "glance-store-drain-a-") || len(job.GetName()) != len("glance-store-drain-a-")+8 {
		t.Errorf("Job %s, want glance-store-drain-a-<hash>", job.GetName())
	}
	y := job.String()
	for _, want := range []string{"- /var/lib/glance-krm/store-drain/drain.py\n        - a\n        - b\n",
		"value: http://glance-default.ns.svc:9292", "value: glance-store-drain-a\n", "serviceAccountName: glance-store-drain",
		"name: " + script.GetName(), "- name: GLANCE_KRM_DRAIN_JOB\n          value: " + job.GetName() + "\n"} {
		if !strings.Contains(y, want) {
			t.Errorf("the drain Job lacks %q:\n%s", want, y)
		}
	}
	if job.GetAnnotation(v1alpha1.AnnotationRelease) != "" {
		t.Error("the drain Job carries the openstack-release annotation: the controller would take it for a schema migration")
	}
	if w, d := job.GetAnnotation("argocd.argoproj.io/sync-wave"), job.GetAnnotation("config.kubernetes.io/depends-on"); w != "2" ||
		d != "apps/namespaces/ns/Deployment/glance,apps/namespaces/ns/Deployment/glance-next,/namespaces/ns/ConfigMap/glance-store-drain-a" {
		t.Errorf("wave %q depends-on %q: want 2, after every Deployment and the record", w, d)
	}
	if from := job.GetAnnotation(v1alpha1.AnnotationDrainFrom); from != "a" {
		t.Errorf("the drain Job's %s is %q, want a", v1alpha1.AnnotationDrainFrom, from)
	}
	// The record: the render's, empty, before the Job (the first wave).
	if got := record.GetLabels(); !maps.Equal(got, map[string]string{v1alpha1.LabelManagedBy: "glance-krm",
		v1alpha1.LabelComponent: v1alpha1.ComponentDrainRecord, v1alpha1.LabelGlance: "glance"}) {
		t.Errorf("the record's labels are %v", got)
	}
	if _, found, _ := record.NestedStringMap("data"); found {
		t.Errorf("the rendered record has data, which a GitOps engine would set back over the Job's:\n%s", record.String())
	}
	if w := record.GetAnnotation("argocd.argoproj.io/sync-wave"); w != "0" {
		t.Errorf("the record is in wave %q, the Job in 2: it must be there before the Job, in wave 0", w)
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
	var r rbacv1.Role
	if err := role.As(&r); err != nil {
		t.Fatal(err)
	}
	if want := []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: []string{"glance-store-drain-a"},
		Verbs: []string{"get", "update", "patch"}}}; !equality.Semantic.DeepEqual(r.Rules, want) {
		t.Errorf("the Role's rules are %+v, want only get, update and patch of the record", r.Rules)
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
	if own == nil {
		t.Error("no drain NetworkPolicy")
	}
	if admitted != 2 {
		t.Errorf("%d API policies admit the drain pods, want both (glance, glance-next)", admitted)
	}

	again, failed := runFn(t, itemsOf(t, mustYAML(t, rl)))
	if failed || !bytes.Equal(itemsOf(t, again), itemsOf(t, mustYAML(t, rl))) {
		t.Error("a second run on its own output changed it")
	}

	// The next commit drops the annotation: a run on the last output (as
	// kpt keeps it) drops every drain object, the record too.
	dropped := bytes.Replace(itemsOf(t, mustYAML(t, rl)), []byte("glance.openstack.c5c3.io/drain-to: b"), []byte("other: x"), 1)
	out, failed := runFn(t, dropped)
	rl2, err := fn.ParseResourceList(out)
	if err != nil || failed {
		t.Fatalf("failed: %v %s", err, out)
	}
	if i := slices.IndexFunc(rl2.Items, func(o *fn.KubeObject) bool { return strings.Contains(o.GetName(), "store-drain") }); i >= 0 {
		t.Errorf("the drain is no longer asked for, yet %s %s stays", rl2.Items[i].GetKind(), rl2.Items[i].GetName())
	}

	// Without the annotation, no drain object.
	rl, _ = runFnOn(t, docs(glanceWith(twoAPIs), testBackend("a", "glance", false), testBackend("b", "glance", true)))
	if i := slices.IndexFunc(rl.Items, func(o *fn.KubeObject) bool { return strings.Contains(o.GetName(), "store-drain") }); i >= 0 {
		t.Errorf("no drain asked for, yet %s %s", rl.Items[i].GetKind(), rl.Items[i].GetName())
	}
}

// TestStoreDrainRefused: a drain into a store the Glance does not have,
// through no API that serves both, or of a store that is an API's default
// (new uploads would land in it) is an error on the GlanceBackend at its
// annotation, and nothing is rendered.
func TestStoreDrainRefused(t *testing.T) {
	for name, tc := range map[string]struct{ input, says string }{
		"an unknown target": {docs(testGlance, drainingBackend("a", "elsewhere", false), testBackend("b", "glance", true)), `"elsewhere"`},
		"no API serves both": {docs(glanceWith(`  apis:
  - name: default
    backends: [a, c]
    defaultBackend: c
  - name: next
    backends: [b]
    defaultBackend: b
`), drainingBackend("a", "b", false), testBackend("b", "glance", false), testBackend("c", "glance", true)), `no Image API of the Glance serves both "a" and "b"`},
		"the default store": {docs(testGlance, drainingBackend("a", "b", true), testBackend("b", "glance", false)),
			`store "a" is the default store of Image API "default": new uploads land in the default store and would be orphaned by the store's removal`},
		"the default of one API": {docs(glanceWith(`  apis:
  - name: default
  - name: old
    replicas: 1
    backends: [a]
    defaultBackend: a
`), drainingBackend("a", "b", false), testBackend("b", "glance", true)), `store "a" is the default store of Image API "old"`},
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

// TestStoreDrainOfTheDefaultMovedAway: the commit that drains the old
// default store also makes another store the default: it passes.
func TestStoreDrainOfTheDefaultMovedAway(t *testing.T) {
	rl, failed := runFnOn(t, docs(testGlance, drainingBackend("a", "b", false), testBackend("b", "glance", true)))
	if failed || !slices.ContainsFunc(rl.Items, func(o *fn.KubeObject) bool {
		return o.GetKind() == "Job" && o.GetAnnotation(v1alpha1.AnnotationDrainFrom) == "a"
	}) {
		t.Errorf("the drain of a former default did not pass: %v", rl.Results)
	}
}
