// Package glance is the Glance reconciler: it aggregates the attached
// backends' conditions into the Glance's BackendsReady condition and warns
// on the Glance, with a GlanceBackendSkipped event, about each backend
// that is not ready.
package glance

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
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
// +kubebuilder:rbac:groups=glance.openstack.c5c3.io,resources=glances/status,verbs=update
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// pending is a backend that is not credential-ready and projected.
type pending struct {
	v1alpha1.GlanceBackend
	reason, message string
}

// Reconcile writes BackendsReady when it changed and, only then, one
// warning per pending backend: an unchanged state emits nothing.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var g v1alpha1.Glance
	if err := r.Client.Get(ctx, req.NamespacedName, &g); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	backends, err := index.Backends(ctx, r.Client, g.Namespace, g.Name)
	if err != nil {
		return ctrl.Result{}, err
	}
	slices.SortFunc(backends, func(a, b v1alpha1.GlanceBackend) int { return strings.Compare(a.Name, b.Name) })

	var credentialReady []*v1alpha1.GlanceBackend
	var waiting []pending
	for i := range backends {
		b := &backends[i]
		conds, gen := b.Status.Conditions, b.Generation
		credOK := conditions.IsTrue(conds, v1alpha1.ConditionCredentialsReady, gen)
		if credOK {
			credentialReady = append(credentialReady, b)
		}
		switch {
		case !credOK:
			reason, msg := conditions.Reason(conds, v1alpha1.ConditionCredentialsReady, gen)
			waiting = append(waiting, pending{*b, reason, msg})
		case !conditions.IsTrue(conds, v1alpha1.ConditionConfigProjected, gen):
			reason, msg := conditions.Reason(conds, v1alpha1.ConditionConfigProjected, gen)
			waiting = append(waiting, pending{*b, reason, msg})
		}
	}

	c := conditions.Condition{Type: v1alpha1.ConditionBackendsReady}
	names := make([]string, len(waiting))
	for i, p := range waiting {
		names[i] = fmt.Sprintf("%s (%s)", p.Name, p.reason)
	}
	pendingList := "; pending: " + strings.Join(names, ", ")
	if len(waiting) == 0 {
		pendingList = ""
	}
	// The exactly-one rule counts credential-ready defaults only: a default
	// whose credentials are missing is no default.
	defaultStore, err := v1alpha1.DefaultBackend(g.Namespace+"/"+g.Name, credentialReady)
	switch {
	case err != nil:
		c.Reason = v1alpha1.ReasonNoDefaultBackend
		c.Message = "counting credential-ready backends only: " + err.Error() + pendingList
	case len(waiting) > 0:
		c.Reason = v1alpha1.ReasonWaitingForBackends
		c.Message = fmt.Sprintf("default store %q is valid%s", defaultStore, pendingList)
	default:
		c.OK, c.Reason = true, v1alpha1.ReasonAllBackendsProjected
		c.Message = fmt.Sprintf("%d backends credential-ready and projected; default store %q", len(backends), defaultStore)
	}

	next, changed := conditions.Apply(g.Status.Conditions, g.Generation, c)
	if !changed && g.Status.ObservedGeneration == g.Generation {
		return ctrl.Result{}, nil
	}
	g.Status.Conditions, g.Status.ObservedGeneration = next, g.Generation
	if err := r.Client.Status().Update(ctx, &g); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	for _, p := range waiting {
		if p.reason == conditions.NotObserved {
			continue // not judged yet: its own reconcile will bring it back here
		}
		r.Recorder.Eventf(&g, &p.GlanceBackend, corev1.EventTypeWarning, v1alpha1.EventReasonGlanceBackendSkipped, "Aggregate",
			"GlanceBackend %q is not ready (%s): %s", p.Name, p.reason, p.message)
	}
	return ctrl.Result{}, nil
}

// SetupWithManager re-aggregates whenever an attached backend changes.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("glance").
		For(&v1alpha1.Glance{}).
		Watches(&v1alpha1.GlanceBackend{}, handler.EnqueueRequestsFromMapFunc(index.GlanceOfBackend)).
		Complete(r)
}
