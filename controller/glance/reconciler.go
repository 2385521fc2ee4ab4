// Package glance is the Glance reconciler: it aggregates the attached
// backends' conditions into the Glance's BackendsReady condition and warns
// on the Glance, with a GlanceBackendSkipped event, when a backend becomes
// not ready or its reason changes; and it reads the release the schema is
// at off the Glance's completed glance-manage Jobs into DatabaseReady and
// status.installedRelease, refusing a downgrade or a skipped release
// (UpgradePathInvalid) with a Warning event; and the records of its
// store drains into StoresDrained. Ready aggregates the three, with
// kstatus's Stalled or Reconciling beside it (ready.go), and
// status.endpoint says where the generated workload serves the API.
package glance

import (
	"context"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	"github.com/c5c3/glance-krm/controller/conditions"
	"github.com/c5c3/glance-krm/controller/index"
	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

// Reconciler computes a Glance's conditions and status.endpoint.
type Reconciler struct {
	Client   client.Client
	Recorder recorder.EventRecorder
}

// +kubebuilder:rbac:groups=glance.openstack.c5c3.io,resources=glances;glancebackends,verbs=get;list;watch
// +kubebuilder:rbac:groups=glance.openstack.c5c3.io,resources=glances/status,verbs=patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;watch
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch

// Reconcile writes BackendsReady and DatabaseReady when they changed
// and, only then, one warning per backend that became pending or is
// pending for another reason than the condition said before, and one
// when the release path became refused: an unchanged state, or a backend
// still pending for the same reason, emits nothing.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var g v1alpha1.Glance
	if err := r.Client.Get(ctx, req.NamespacedName, &g); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	backends, err := index.Backends(ctx, r.Client, g.Namespace, g.Name)
	if err != nil {
		return ctrl.Result{}, err
	}
	jobs, records, err := r.localRecords(ctx, &g)
	if err != nil {
		return ctrl.Result{}, err
	}
	endpoint, err := r.endpoint(ctx, &g)
	if err != nil {
		return ctrl.Result{}, err
	}
	agg := Aggregate(g.Namespace+"/"+g.Name, backends)
	schema := JudgeSchema(&g, jobs)
	drained := JudgeDrains(g.Name, records)
	var verdicts []conditions.Condition
	if !agg.Unjudged {
		verdicts = append(verdicts, agg.Condition)
	}
	if schema.Condition != nil {
		verdicts = append(verdicts, *schema.Condition)
	}
	if drained != nil {
		verdicts = append(verdicts, *drained)
	}
	if len(verdicts) == 0 {
		return ctrl.Result{}, nil
	}
	before := pendingIn(g.Status.Conditions)
	refusedBefore := refusal(g.Status.Conditions)
	failedBefore := drainFailure(g.Status.Conditions)
	next := aggregate(g.Status.Conditions, g.Generation, drained == nil, agg.DefaultWaiting, verdicts)
	installed := g.Status.InstalledRelease
	if schema.Installed != "" {
		installed = schema.Installed
	}
	if equality.Semantic.DeepEqual(next, g.Status.Conditions) && g.Status.ObservedGeneration == g.Generation &&
		installed == g.Status.InstalledRelease && endpoint == g.Status.Endpoint {
		return ctrl.Result{}, nil
	}
	if res, err := conditions.PatchStatus(ctx, r.Client, &g, func() {
		g.Status.Conditions, g.Status.ObservedGeneration, g.Status.InstalledRelease = next, g.Generation, installed
		g.Status.Endpoint = endpoint
	}); err != nil || !res.IsZero() {
		return res, err
	}
	r.events(&g, schema, drained, agg, refusedBefore, failedBefore, before)
	return ctrl.Result{}, nil
}

// aggregate is the conditions to write: the verdicts, then Ready and
// Stalled or Reconciling judged on them (Judge). StoresDrained goes when
// no drain record is left: the drain is over, and a condition no longer
// judged would hold Ready back at the next generation.
func aggregate(current []metav1.Condition, generation int64, noDrain, defaultWaiting bool, verdicts []conditions.Condition) []metav1.Condition {
	next, _ := conditions.Apply(current, generation, verdicts...)
	if noDrain {
		meta.RemoveStatusCondition(&next, v1alpha1.ConditionStoresDrained)
	}
	r := Judge(next, generation, defaultWaiting)
	abnormal := []conditions.Condition{r.Ready}
	if r.Abnormal != nil {
		abnormal = append(abnormal, *r.Abnormal)
	}
	next, _ = conditions.Apply(next, generation, abnormal...)
	for _, typ := range r.NotAbnormal {
		meta.RemoveStatusCondition(&next, typ)
	}
	return next
}

// endpoint is status.endpoint: the Glance's StatusEndpoint while a
// Deployment the function generated for it serves it (the stable
// Service, and the HTTPRoute with a gateway, come with it), else none —
// a hand-written workload's Service is the user's to name. A Glance on a
// target cluster, whose objects are not read here, has none.
func (r *Reconciler) endpoint(ctx context.Context, g *v1alpha1.Glance) (string, error) {
	if g.Spec.TargetClusterRef != nil {
		return "", nil
	}
	var deps appsv1.DeploymentList
	if err := r.Client.List(ctx, &deps, client.InNamespace(g.Namespace), client.MatchingLabels{
		v1alpha1.LabelGlance: g.Name, v1alpha1.LabelComponent: v1alpha1.ComponentWorkload, v1alpha1.LabelManagedBy: v1alpha1.ManagedByGlanceKRM,
	}); err != nil {
		return "", err
	}
	if len(deps.Items) == 0 {
		return "", nil
	}
	return g.StatusEndpoint(), nil
}

// drainFailure is the message of a StoresDrained written before that
// said a drain failed, "" otherwise.
func drainFailure(conds []metav1.Condition) string {
	c := meta.FindStatusCondition(conds, v1alpha1.ConditionStoresDrained)
	if c == nil || c.Reason != v1alpha1.ReasonDrainFailed {
		return ""
	}
	return c.Message
}

// refusal is the message of a DatabaseReady written before that refused
// the release path, "" otherwise: a refusal already reported is not
// reported again.
func refusal(conds []metav1.Condition) string {
	c := meta.FindStatusCondition(conds, v1alpha1.ConditionDatabaseReady)
	if c == nil || (c.Reason != v1alpha1.ReasonUpgradePathInvalid && c.Reason != v1alpha1.ReasonDowngradeNotSupported) {
		return ""
	}
	return c.Message
}

// pendingIn reads back, from the BackendsReady condition written before,
// which backends were pending and why: the Glance's status is where the
// last reported state survives a restart or a new leader.
func pendingIn(conds []metav1.Condition) map[string]string {
	out := map[string]string{}
	c := meta.FindStatusCondition(conds, v1alpha1.ConditionBackendsReady)
	if c == nil {
		return out
	}
	_, list, ok := strings.Cut(c.Message, pendingPrefix)
	if !ok {
		return out
	}
	for _, item := range strings.Split(list, ", ") {
		name, reason, ok := strings.Cut(item, " (")
		if ok {
			out[name] = strings.TrimSuffix(reason, ")")
		}
	}
	return out
}

// SetupWithManager aggregates a Glance when its backends' conditions or
// specs change and every one of them is judged (package events.go): not
// on its own status writes, and not once per backend while they are
// being judged; when one of its glance-manage Jobs completes; when a
// store drain's record changes; and when a Deployment of it comes, goes
// or is relabelled (status.endpoint).
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	e := enqueuer{reader: mgr.GetClient()}
	return ctrl.NewControllerManagedBy(mgr).
		Named("glance").
		Watches(&v1alpha1.Glance{}, glanceEvents{e}).
		Watches(&v1alpha1.GlanceBackend{}, backendEvents{e}).
		Watches(&batchv1.Job{}, jobEvents{e}).
		Watches(&corev1.ConfigMap{}, recordEvents{e}).
		Watches(&appsv1.Deployment{}, deploymentEvents{e}).
		Complete(r)
}

// localRecords are the Glance's Jobs and drain records; a remote Glance's
// run on its own cluster, so it has none here.
func (r *Reconciler) localRecords(ctx context.Context, g *v1alpha1.Glance) ([]batchv1.Job, []corev1.ConfigMap, error) {
	if g.Spec.TargetClusterRef != nil {
		return nil, nil, nil
	}
	var jobs batchv1.JobList
	if err := r.Client.List(ctx, &jobs, client.InNamespace(g.Namespace), client.MatchingLabels{v1alpha1.LabelGlance: g.Name}); err != nil {
		return nil, nil, err
	}
	var records corev1.ConfigMapList
	if err := r.Client.List(ctx, &records, client.InNamespace(g.Namespace),
		client.MatchingLabels{v1alpha1.LabelGlance: g.Name, v1alpha1.LabelComponent: v1alpha1.ComponentDrainRecord}); err != nil {
		return nil, nil, err
	}
	return jobs.Items, records.Items, nil
}

// events records what changed since the last status: a refused release,
// a failed drain, and each GlanceBackend newly skipped.
func (r *Reconciler) events(g *v1alpha1.Glance, schema Schema, drained *conditions.Condition, agg Aggregation, refusedBefore, failedBefore string, before map[string]string) {
	// The Event names the objects without a resourceVersion, so that the
	// recorder folds repeats of one warning into a series.
	regarding := g.DeepCopy()
	regarding.ResourceVersion = ""
	if schema.Refused && refusedBefore != schema.Condition.Message {
		r.Recorder.Eventf(regarding, nil, corev1.EventTypeWarning, schema.Condition.Reason, "JudgeRelease", "%s", schema.Condition.Message)
	}
	if drained != nil && drained.Reason == v1alpha1.ReasonDrainFailed && failedBefore != drained.Message {
		r.Recorder.Eventf(regarding, nil, corev1.EventTypeWarning, v1alpha1.ReasonDrainFailed, "JudgeDrains", "%s", drained.Message)
	}
	if agg.Unjudged {
		return
	}
	for _, p := range agg.Pending {
		if before[p.Backend.Name] == p.Reason {
			continue // already reported for this reason
		}
		related := p.Backend.DeepCopy()
		related.ResourceVersion = ""
		r.Recorder.Eventf(regarding, related, corev1.EventTypeWarning, v1alpha1.EventReasonGlanceBackendSkipped, "Aggregate",
			"GlanceBackend %q is not ready (%s): %s", p.Backend.Name, p.Reason, p.Message)
	}
}
