package manager_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fluxcd/cli-utils/pkg/kstatus/status"
	fluxkustomize "github.com/fluxcd/pkg/apis/kustomize"
	"github.com/fluxcd/pkg/runtime/cel"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	upstreamstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/c5c3/glance-krm/internal/argohealth"
	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

var writeHealthTestdata = flag.Bool("health-testdata", false,
	"rewrite resource_customizations/glance.openstack.c5c3.io/*/testdata from the live objects (then read the diff)")

const customizations = "../../resource_customizations/glance.openstack.c5c3.io"

// engines is how each engine judges a live object: Flux's kstatus (what
// a Kustomization's wait reads without healthCheckExprs: Flux's fork,
// github.com/fluxcd/cli-utils, which kustomize-controller runs, and
// sigs.k8s.io/cli-utils, which it forks; judge requires both to agree),
// the
// healthCheckExprs of examples/flux/flux.yaml evaluated by Flux's own
// code, and the Argo CD health check of resource_customizations in
// Argo CD's Lua VM.
type engines struct {
	kstatus status.Status
	cel     status.Status // "" when the expressions cannot be evaluated yet (Flux reports Unknown and keeps waiting)
	argo    argohealth.Status
}

// want is one state of a Glance: its Ready condition, the abnormal-true
// condition beside it, and each engine's verdict.
type want struct {
	file     string // the testdata file this state is (without .yaml)
	ready    metav1.ConditionStatus
	reason   string
	abnormal string // Stalled, Reconciling or ""
	kstatus  status.Status
	cel      status.Status
	argo     string
	holdsToo []string // conditions that must be True too
	absent   []string // conditions that must be gone
}

// TestGlanceHealthForEveryEngine walks one Glance through the states
// its health must tell apart, on a real API server with the controller
// running: no status yet, no default store (failed), a store pending
// (in progress), ready, a skipped and a downgraded release (failed), a
// valid upgrade waiting for its Job (in progress), a drain running (in
// progress), failed (failed) and done; and its backends from no status
// to ready. At each state it checks the conditions (Ready True only
// when every part holds; Stalled for a failure, Reconciling for work in
// progress, never both), what Flux's kstatus, the Flux example's
// healthCheckExprs and the Argo CD health check make of the live
// object, and that resource_customizations' testdata are exactly what
// the controller wrote and expect what the health check says.
func TestGlanceHealthForEveryEngine(t *testing.T) {
	ctx := context.Background()
	ns := namespace(t)
	exprs := fluxHealthExprs(t)
	argoCases := map[string]map[string]argohealth.Status{
		"Glance": healthTests(t, "Glance"), "GlanceBackend": healthTests(t, "GlanceBackend"),
	}
	check := func(obj client.Object, w want) {
		t.Helper()
		var u *unstructured.Unstructured
		eventually(t, fmt.Sprintf("%T %s: %s", obj, obj.GetName(), w.file), func() error {
			u = live(t, obj)
			return w.holds(u)
		})
		e := judge(t, u, exprs)
		if e.kstatus != w.kstatus || e.cel != w.cel || e.argo.Status != w.argo {
			t.Errorf("%s %s (%s): kstatus %s, healthCheckExprs %q, Argo CD %s; want %s, %q, %s",
				u.GetKind(), obj.GetName(), w.file, e.kstatus, e.cel, e.argo.Status, w.kstatus, w.cel, w.argo)
		}
		testdata(t, u.GetKind(), w.file, u, ns, argoCases[u.GetKind()], exprs)
	}

	g := glance(ns, "glance")
	primary := backend(ns, "primary", "glance", true, "primary-creds")
	secondary := backend(ns, "secondary", "glance", false, "secondary-creds")
	create(t, credentialsSecret(ns, "secondary-creds", "a", "s"))
	for _, o := range []client.Object{g, primary, secondary} {
		if err := k8s.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
		// What the API server answers to the create: no status yet.
		kind := map[bool]string{true: "Glance", false: "GlanceBackend"}[o == g]
		o.GetObjectKind().SetGroupVersionKind(v1alpha1.GroupVersion.WithKind(kind))
		u := toUnstructured(t, o)
		unstructured.RemoveNestedField(u.Object, "status")
		e := judge(t, u, exprs)
		if e.kstatus != status.CurrentStatus || e.cel != "" || e.argo.Status != "Progressing" {
			t.Errorf("%s %s without status: kstatus %s (Flux's kstatus calls it current: why the example has healthCheckExprs), healthCheckExprs %q, Argo CD %s",
				kind, o.GetName(), e.kstatus, e.cel, e.argo.Status)
		}
		if o == g || o == secondary {
			testdata(t, kind, "progressing_noStatus", u, ns, argoCases[kind], exprs)
		}
	}

	// The default store's Secret is missing: no credential-ready default,
	// until it arrives (work in progress, not a failure).
	check(g, want{file: "progressing_defaultWaitingForCredentials", ready: F, reason: v1alpha1.ReasonWaitingForCredentials, abnormal: v1alpha1.ConditionReconciling,
		kstatus: status.InProgressStatus, cel: status.InProgressStatus, argo: "Progressing"})
	check(primary, want{file: "progressing_waitingForCredentials", ready: F, reason: v1alpha1.ReasonNotAllReady,
		kstatus: status.InProgressStatus, cel: status.InProgressStatus, argo: "Progressing"})

	// Both credential-ready, no workload mounts them yet.
	create(t, credentialsSecret(ns, "primary-creds", "a", "s"))
	check(g, want{file: "progressing_waitingForBackends", ready: F, reason: v1alpha1.ReasonWaitingForBackends, abnormal: v1alpha1.ConditionReconciling,
		kstatus: status.InProgressStatus, cel: status.InProgressStatus, argo: "Progressing"})
	check(secondary, want{file: "progressing_waitingForProjection", ready: F, reason: v1alpha1.ReasonNotAllReady,
		kstatus: status.InProgressStatus, cel: status.InProgressStatus, argo: "Progressing"})

	// The function's generated Deployment mounts both, and db-sync ran.
	sec, d := wired(ns, "glance", "primary", "secondary")
	d.Labels[v1alpha1.LabelComponent], d.Labels[v1alpha1.LabelManagedBy] = v1alpha1.ComponentWorkload, v1alpha1.ManagedByGlanceKRM
	create(t, sec, d)
	healthy := want{file: "healthy", ready: T, reason: v1alpha1.ReasonAllReady, kstatus: status.CurrentStatus, cel: status.CurrentStatus, argo: "Healthy"}
	check(primary, healthy)
	// The first db-sync runs: the schema is not there yet.
	glanceManageJob(t, ns, "glance-db-sync-2025-2", "2025.2", false)
	check(g, want{ready: F, reason: v1alpha1.ReasonDBSyncInProgress, abnormal: v1alpha1.ConditionReconciling,
		kstatus: status.InProgressStatus, cel: status.InProgressStatus, argo: "Progressing"})
	complete(t, ns, "glance-db-sync-2025-2")
	healthy.holdsToo = []string{v1alpha1.ConditionBackendsReady, v1alpha1.ConditionDatabaseReady}
	check(g, healthy)
	if got := live(t, g); fmt.Sprint(got.Object["status"].(map[string]any)["endpoint"]) != "http://glance."+ns+".svc.cluster.local:9292/" {
		t.Errorf("status.endpoint %v", got.Object["status"].(map[string]any)["endpoint"])
	}
	printerColumns(t, ns, "glance True 2025.2 http://glance."+ns+".svc.cluster.local:9292/")

	// A spec the controller has not observed yet: what every engine sees
	// between a commit and the controller's next write.
	stale := live(t, g)
	stale.SetGeneration(stale.GetGeneration() + 1)
	if e := judge(t, stale, exprs); e.kstatus != status.InProgressStatus || e.cel != status.InProgressStatus || e.argo.Status != "Progressing" {
		t.Errorf("a stale status: kstatus %s, healthCheckExprs %q, Argo CD %s", e.kstatus, e.cel, e.argo.Status)
	}
	testdata(t, "Glance", "progressing_staleGeneration", stale, ns, argoCases["Glance"], exprs)
	staleB := live(t, primary)
	staleB.SetGeneration(staleB.GetGeneration() + 1)
	testdata(t, "GlanceBackend", "progressing_staleGeneration", staleB, ns, argoCases["GlanceBackend"], exprs)
	testdata(t, "GlanceBackend", "healthy", live(t, primary), ns, argoCases["GlanceBackend"], exprs)

	// No backend marked default: a failure a change must fix.
	update(t, primary, func() { primary.Spec.IsDefault = false })
	check(g, want{file: "degraded_noDefaultBackend", ready: F, reason: v1alpha1.ReasonNoDefaultBackend, abnormal: v1alpha1.ConditionStalled,
		kstatus: status.FailedStatus, cel: status.FailedStatus, argo: "Degraded"})
	update(t, primary, func() { primary.Spec.IsDefault = true })
	healthy.file = ""
	check(g, healthy)

	release := func(r string) {
		t.Helper()
		update(t, g, func() { g.Spec.OpenStackRelease, g.Spec.Image.Tag = r, r })
	}
	release("2026.2") // skips 2026.1
	check(g, want{file: "degraded_upgradePathInvalid", ready: F, reason: v1alpha1.ReasonUpgradePathInvalid, abnormal: v1alpha1.ConditionStalled,
		kstatus: status.FailedStatus, cel: status.FailedStatus, argo: "Degraded"})
	release("2025.1")
	check(g, want{file: "degraded_downgradeNotSupported", ready: F, reason: v1alpha1.ReasonDowngradeNotSupported, abnormal: v1alpha1.ConditionStalled,
		kstatus: status.FailedStatus, cel: status.FailedStatus, argo: "Degraded"})
	release("2026.1")
	check(g, want{file: "progressing_dbSyncInProgress", ready: F, reason: v1alpha1.ReasonDBSyncInProgress, abnormal: v1alpha1.ConditionReconciling,
		kstatus: status.InProgressStatus, cel: status.InProgressStatus, argo: "Progressing"})
	glanceManageJob(t, ns, "glance-db-sync-2026-1", "2026.1", true)
	check(g, healthy)

	// A store drain: its record waits for the Job, the Job fails, then
	// completes; once the record is gone StoresDrained goes with it.
	record := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "glance-store-drain-secondary", Namespace: ns,
		Labels:      map[string]string{v1alpha1.LabelManagedBy: v1alpha1.ManagedByGlanceKRM, v1alpha1.LabelComponent: v1alpha1.ComponentDrainRecord, v1alpha1.LabelGlance: "glance"},
		Annotations: map[string]string{v1alpha1.AnnotationDrainFrom: "secondary"}}}
	create(t, record)
	check(g, want{file: "progressing_drainInProgress", ready: F, reason: v1alpha1.ReasonDrainInProgress, abnormal: v1alpha1.ConditionReconciling,
		kstatus: status.InProgressStatus, cel: status.InProgressStatus, argo: "Progressing"})
	update(t, record, func() {
		record.Data = map[string]string{v1alpha1.DrainRecordFrom: "secondary", v1alpha1.DrainRecordTo: "primary", v1alpha1.DrainRecordState: v1alpha1.DrainFailed, v1alpha1.DrainRecordRemaining: "2"}
	})
	check(g, want{file: "degraded_drainFailed", ready: F, reason: v1alpha1.ReasonDrainFailed, abnormal: v1alpha1.ConditionStalled,
		kstatus: status.FailedStatus, cel: status.FailedStatus, argo: "Degraded"})
	update(t, record, func() {
		record.Data[v1alpha1.DrainRecordState], record.Data[v1alpha1.DrainRecordRemaining] = v1alpha1.DrainComplete, "0"
	})
	healthy.holdsToo = []string{v1alpha1.ConditionBackendsReady, v1alpha1.ConditionDatabaseReady, v1alpha1.ConditionStoresDrained}
	healthy.file = "healthy_drainComplete"
	check(g, healthy)
	if err := k8s.Delete(ctx, record); err != nil {
		t.Fatal(err)
	}
	healthy.holdsToo, healthy.absent, healthy.file = []string{v1alpha1.ConditionBackendsReady, v1alpha1.ConditionDatabaseReady}, []string{v1alpha1.ConditionStoresDrained}, ""
	check(g, healthy)

	// Taken over by hand: the Deployment is no longer the function's, so
	// the Glance names no endpoint.
	update(t, d, func() { delete(d.Labels, v1alpha1.LabelComponent) })
	eventually(t, "status.endpoint gone", func() error {
		if e, _, _ := unstructured.NestedString(live(t, g).Object, "status", "endpoint"); e != "" {
			return fmt.Errorf("status.endpoint is %q", e)
		}
		return nil
	})
}

// holds tells whether a live object is in the state.
func (w want) holds(u *unstructured.Unstructured) error {
	var st struct {
		ObservedGeneration int64              `json:"observedGeneration"`
		Conditions         []metav1.Condition `json:"conditions"`
	}
	b, _ := json.Marshal(u.Object["status"])
	_ = json.Unmarshal(b, &st)
	if st.ObservedGeneration != u.GetGeneration() {
		return fmt.Errorf("status describes generation %d of %d", st.ObservedGeneration, u.GetGeneration())
	}
	r := meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionReady)
	if r == nil || r.Status != w.ready || r.Reason != w.reason || r.ObservedGeneration != u.GetGeneration() {
		return fmt.Errorf("Ready is %+v, want %s/%s", r, w.ready, w.reason)
	}
	for _, typ := range []string{v1alpha1.ConditionStalled, v1alpha1.ConditionReconciling} {
		c := meta.FindStatusCondition(st.Conditions, typ)
		switch {
		case typ == w.abnormal && (c == nil || c.Status != T || c.Reason != w.reason):
			return fmt.Errorf("%s is %+v, want True/%s", typ, c, w.reason)
		case typ != w.abnormal && c != nil:
			return fmt.Errorf("%s is written (%s/%s), want none", typ, c.Status, c.Reason)
		}
	}
	for _, typ := range w.holdsToo {
		if c := meta.FindStatusCondition(st.Conditions, typ); c == nil || c.Status != T {
			return fmt.Errorf("%s is %+v, want True", typ, c)
		}
	}
	for _, typ := range w.absent {
		if c := meta.FindStatusCondition(st.Conditions, typ); c != nil {
			return fmt.Errorf("%s is still written: %+v", typ, c)
		}
	}
	return nil
}

// live reads an object as the engines do: unstructured, from the API
// server.
func live(t *testing.T, obj client.Object) *unstructured.Unstructured {
	t.Helper()
	kind := v1alpha1.GlanceKind
	if _, ok := obj.(*v1alpha1.GlanceBackend); ok {
		kind = v1alpha1.GlanceBackendKind
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(v1alpha1.GroupVersion.WithKind(kind))
	if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(obj), u); err != nil {
		t.Fatal(err)
	}
	return u
}

func toUnstructured(t *testing.T, obj client.Object) *unstructured.Unstructured {
	t.Helper()
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatal(err)
	}
	return &unstructured.Unstructured{Object: m}
}

// judge asks each engine about an object.
func judge(t *testing.T, u *unstructured.Unstructured, exprs map[string]*cel.StatusEvaluator) engines {
	t.Helper()
	var e engines
	res, err := status.Compute(u)
	if err != nil {
		t.Fatal(err)
	}
	e.kstatus = res.Status
	upstream, err := upstreamstatus.Compute(u)
	if err != nil {
		t.Fatal(err)
	}
	if string(upstream.Status) != string(res.Status) {
		t.Errorf("%s %s: sigs.k8s.io/cli-utils' kstatus says %s, Flux's fork %s", u.GetKind(), u.GetName(), upstream.Status, res.Status)
	}
	if r, err := exprs[u.GetKind()].Evaluate(context.Background(), u); err == nil {
		e.cel = r.Status
	}
	script, err := os.ReadFile(filepath.Join(customizations, u.GetKind(), "health.lua"))
	if err != nil {
		t.Fatal(err)
	}
	if e.argo, err = argohealth.Evaluate(string(script), u.Object, false); err != nil {
		t.Fatal(err)
	}
	return e
}

// fluxHealthExprs are the healthCheckExprs of examples/flux/flux.yaml,
// by kind, as Flux's kustomize-controller compiles them.
func fluxHealthExprs(t *testing.T) map[string]*cel.StatusEvaluator {
	t.Helper()
	raw, err := os.ReadFile("../../examples/flux/flux.yaml")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*cel.StatusEvaluator{}
	for _, doc := range strings.Split(string(raw), "\n---\n") {
		var k struct {
			Kind string `json:"kind"`
			Spec struct {
				HealthCheckExprs []fluxkustomize.CustomHealthCheck `json:"healthCheckExprs"`
			} `json:"spec"`
		}
		if err := yaml.Unmarshal([]byte(doc), &k); err != nil {
			t.Fatal(err)
		}
		for _, hc := range k.Spec.HealthCheckExprs {
			if hc.APIVersion != v1alpha1.APIVersion {
				continue
			}
			if out[hc.Kind], err = cel.NewStatusEvaluator(&hc.HealthCheckExpressions); err != nil {
				t.Fatalf("examples/flux/flux.yaml, %s: %v", hc.Kind, err)
			}
		}
	}
	for _, kind := range []string{v1alpha1.GlanceKind, v1alpha1.GlanceBackendKind} {
		if out[kind] == nil {
			t.Fatalf("examples/flux/flux.yaml has no healthCheckExprs for %s", kind)
		}
	}
	return out
}

// healthTests reads a health_test.yaml: the Argo CD health each testdata
// file must get.
func healthTests(t *testing.T, kind string) map[string]argohealth.Status {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(customizations, kind, "health_test.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var tests struct {
		Tests []struct {
			InputPath    string            `json:"inputPath"`
			HealthStatus argohealth.Status `json:"healthStatus"`
		} `json:"tests"`
	}
	if err := yaml.Unmarshal(raw, &tests); err != nil {
		t.Fatal(err)
	}
	out := map[string]argohealth.Status{}
	for _, c := range tests.Tests {
		out[strings.TrimSuffix(filepath.Base(c.InputPath), ".yaml")] = c.HealthStatus
	}
	return out
}

// testdata holds a live object to resource_customizations' testdata: the
// file must be the object as the controller wrote it (in namespace
// openstack, without server-side bookkeeping), and health_test.yaml must
// expect for it what the health check says of the live object. With
// -health-testdata the file is written instead.
func testdata(t *testing.T, kind, file string, u *unstructured.Unstructured, ns string, cases map[string]argohealth.Status, exprs map[string]*cel.StatusEvaluator) {
	t.Helper()
	if file == "" {
		return
	}
	path := filepath.Join(customizations, kind, "testdata", file+".yaml")
	got := normalize(t, u, ns)
	if *writeHealthTestdata {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -health-testdata and read the diff)", err)
	}
	if string(want) != string(got) {
		t.Errorf("%s is not what the controller writes now (run with -health-testdata and read the diff):\n%s", path, got)
	}
	live := judge(t, u, exprs).argo
	if c, ok := cases[file]; !ok || c.Status != live.Status || c.Message != strings.ReplaceAll(live.Message, ns, "openstack") {
		t.Errorf("%s/health_test.yaml expects %+v for testdata/%s.yaml; the health check says %+v of the live object", kind, c, file, live)
	}
}

// normalize is an object as the testdata keep it: the namespace and the
// times fixed, what the API server adds for itself dropped.
func normalize(t *testing.T, u *unstructured.Unstructured, ns string) []byte {
	t.Helper()
	c := u.DeepCopy()
	for _, f := range []string{"managedFields", "uid", "resourceVersion", "creationTimestamp"} {
		unstructured.RemoveNestedField(c.Object, "metadata", f)
	}
	conds, _, _ := unstructured.NestedSlice(c.Object, "status", "conditions")
	for _, cond := range conds {
		cond.(map[string]any)["lastTransitionTime"] = "2026-01-01T00:00:00Z"
	}
	if conds != nil {
		_ = unstructured.SetNestedSlice(c.Object, conds, "status", "conditions")
	}
	b, err := yaml.Marshal(c.Object)
	if err != nil {
		t.Fatal(err)
	}
	return []byte(strings.ReplaceAll(string(b), ns, "openstack"))
}

// glanceManageJob is a glance-manage Job of a release, labelled and
// annotated as the function's db-sync, running or completed.
func glanceManageJob(t *testing.T, ns, name, release string, done bool) {
	t.Helper()
	j := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{v1alpha1.LabelGlance: "glance"},
			Annotations: map[string]string{v1alpha1.AnnotationRelease: release}},
		Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{Name: "db-sync", Image: "glance"}}}}},
	}
	create(t, j)
	if done {
		complete(t, ns, name)
	}
}

// printerColumns reads `kubectl get glances` as the API server serves it
// (the Table form kubectl asks for): the seed's columns.
func printerColumns(t *testing.T, ns, want string) {
	t.Helper()
	raw, err := kubernetes.NewForConfigOrDie(cfg).RESTClient().Get().AbsPath("/apis", v1alpha1.Group, v1alpha1.Version, "namespaces", ns, "glances").
		SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").DoRaw(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var table metav1.Table
	if err := json.Unmarshal(raw, &table); err != nil {
		t.Fatal(err)
	}
	var cols []string
	for _, c := range table.ColumnDefinitions {
		cols = append(cols, c.Name)
	}
	if got := strings.Join(cols, " "); got != "Name Ready Release Endpoint Age" {
		t.Errorf("columns %q, want the seed's: Name Ready Release Endpoint Age", got)
	}
	if len(table.Rows) != 1 {
		t.Fatalf("%d rows", len(table.Rows))
	}
	var cells []string
	for _, cell := range table.Rows[0].Cells[:4] {
		cells = append(cells, fmt.Sprint(cell))
	}
	if got := strings.Join(cells, " "); got != want {
		t.Errorf("row %q, want %q", got, want)
	}
}
