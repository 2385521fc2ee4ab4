// Package glance is the Glance reconciler: it aggregates the attached
// backends' conditions into the Glance's BackendsReady condition and warns
// on the Glance, with a GlanceBackendSkipped event, when a backend becomes
// not ready or its reason changes.
package glance

import (
	"context"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	"github.com/c5c3/glance-krm/controller/conditions"
	"github.com/c5c3/glance-krm/controller/index"
	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

// Reconciler computes a Glance's BackendsReady condition.
type Reconciler struct {
	Client   client.Client
	Recorder recorder.EventRecorder
}

// +kubebuilder:rbac:groups=glance.openstack.c5c3.io,resources=glances;glancebackends,verbs=get;list;watch
// +kubebuilder:rbac:groups=glance.openstack.c5c3.io,resources=glances/status,verbs=patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile writes BackendsReady when it changed and, only then, one
// warning per backend that became pending or is pending for another
// reason than the condition said before: an unchanged state, or a
// backend still pending for the same reason, emits nothing.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var g v1alpha1.Glance
	if err := r.Client.Get(ctx, req.NamespacedName, &g); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	backends, err := index.Backends(ctx, r.Client, g.Namespace, g.Name)
	if err != nil {
		return ctrl.Result{}, err
	}
	agg := Aggregate(g.Namespace+"/"+g.Name, backends)
	if agg.Unjudged {
		return ctrl.Result{}, nil
	}
	before := pendingIn(g.Status.Conditions)
	next, changed := conditions.Apply(g.Status.Conditions, g.Generation, agg.Condition)
	if !changed && g.Status.ObservedGeneration == g.Generation {
		return ctrl.Result{}, nil
	}
	if res, err := conditions.PatchStatus(ctx, r.Client, &g, func() {
		g.Status.Conditions, g.Status.ObservedGeneration = next, g.Generation
	}); err != nil || !res.IsZero() {
		return res, err
	}
	// The Event names the objects without a resourceVersion, so that the
	// recorder folds repeats of one warning into a series.
	regarding := g.DeepCopy()
	regarding.ResourceVersion = ""
	for _, p := range agg.Pending {
		if before[p.Backend.Name] == p.Reason {
			continue // already reported for this reason
		}
		related := p.Backend.DeepCopy()
		related.ResourceVersion = ""
		r.Recorder.Eventf(regarding, related, corev1.EventTypeWarning, v1alpha1.EventReasonGlanceBackendSkipped, "Aggregate",
			"GlanceBackend %q is not ready (%s): %s", p.Backend.Name, p.Reason, p.Message)
	}
	return ctrl.Result{}, nil
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
// being judged.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	e := enqueuer{reader: mgr.GetClient()}
	return ctrl.NewControllerManagedBy(mgr).
		Named("glance").
		Watches(&v1alpha1.Glance{}, glanceEvents{e}).
		Watches(&v1alpha1.GlanceBackend{}, backendEvents{e}).
		Complete(r)
}
