// Package backend is the GlanceBackend reconciler: the single writer of a
// backend's CredentialsReady, ConfigProjected and Ready conditions. It
// reads, and writes status only; it emits no events (the Glance
// reconciler does, on the Glance).
package backend

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/c5c3/glance-krm/controller/clusters"
	"github.com/c5c3/glance-krm/controller/conditions"
	"github.com/c5c3/glance-krm/controller/index"
	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

// RequeueAfter is how soon a backend waiting for its parent Glance or its
// target cluster looks again, as the contract says.
const RequeueAfter = 15 * time.Second

// RemotePoll is how often a backend whose Glance runs on a target cluster
// is judged again: nothing watches Secrets and Deployments over there.
const RemotePoll = time.Minute

// Reconciler computes a GlanceBackend's conditions.
type Reconciler struct {
	Client    client.Client // cached: backends, Glances, labelled Deployments
	APIReader client.Reader // uncached: Secret data is never cached
	Clusters  *clusters.Registry
	sections  sections
}

// +kubebuilder:rbac:groups=glance.openstack.c5c3.io,resources=glancebackends;glances,verbs=get;list;watch
// +kubebuilder:rbac:groups=glance.openstack.c5c3.io,resources=glancebackends/status,verbs=patch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch

// Reconcile writes the backend's conditions when they changed.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var b v1alpha1.GlanceBackend
	if err := r.Client.Get(ctx, req.NamespacedName, &b); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	v, err := r.verdicts(ctx, &b)
	if err != nil {
		return ctrl.Result{}, err
	}
	next, changed := conditions.Apply(b.Status.Conditions, b.Generation, v.Credentials, v.Projection, readiness(v.Credentials, v.Projection))
	if changed || b.Status.ObservedGeneration != b.Generation {
		if res, err := conditions.PatchStatus(ctx, r.Client, &b, func() {
			b.Status.Conditions, b.Status.ObservedGeneration = next, b.Generation
		}); err != nil || !res.IsZero() {
			return res, err
		}
	}
	switch {
	case v.Requeue:
		return ctrl.Result{RequeueAfter: RequeueAfter}, nil
	case v.Remote:
		return ctrl.Result{RequeueAfter: RemotePoll}, nil
	}
	return ctrl.Result{}, nil
}

// verdict is what a backend's reconcile found out.
type verdict struct {
	Credentials, Projection conditions.Condition
	Requeue                 bool // the parent or its target cluster is missing: look again soon
	Remote                  bool // judged on a target cluster, whose objects are not watched: poll
}

// verdicts finds the parent Glance and the cluster its objects live on,
// then judges credentials and projection there.
func (r *Reconciler) verdicts(ctx context.Context, b *v1alpha1.GlanceBackend) (verdict, error) {
	v := verdict{
		Credentials: conditions.Condition{Type: v1alpha1.ConditionCredentialsReady},
		Projection:  conditions.Condition{Type: v1alpha1.ConditionConfigProjected, Reason: v1alpha1.ReasonWaitingForProjection},
	}
	var g v1alpha1.Glance
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: b.Namespace, Name: b.Spec.GlanceRef.Name}, &g); err != nil {
		if !apierrors.IsNotFound(err) {
			return v, err
		}
		v.Credentials.Reason = v1alpha1.ReasonWaitingForParent
		v.Credentials.Message = fmt.Sprintf("no Glance %q in namespace %q, so the cluster holding this backend's credentials is unknown", b.Spec.GlanceRef.Name, b.Namespace)
		v.Projection.Message = fmt.Sprintf("waiting for Glance %q", b.Spec.GlanceRef.Name)
		v.Requeue = true
		return v, nil
	}

	rd := readers{objects: r.Client, live: r.APIReader, secrets: r.APIReader, sections: &r.sections}
	if ref := g.Spec.TargetClusterRef; ref != nil {
		c, err := r.Clusters.Client(ctx, ref.Name)
		if err != nil {
			v.Credentials.Reason, v.Credentials.Message = v1alpha1.ReasonTargetClusterUnavailable, err.Error()
			v.Projection.Message = fmt.Sprintf("target cluster %q is unavailable", ref.Name)
			v.Requeue = true
			return v, nil
		}
		rd, v.Remote = readers{cluster: ref.Name, objects: c, live: c, secrets: c, sections: &r.sections}, true
	}
	var err error
	if b.Spec.S3 == nil {
		v.Credentials.Reason, v.Credentials.Message = v1alpha1.ReasonWaitingForCredentials, "spec.s3 is not set"
	} else if v.Credentials, err = credentials(ctx, rd.secrets, b.Namespace, b.Spec.S3.CredentialsSecretRef.Name, g.Spec.OpenStackRelease); err != nil {
		return v, err
	}
	v.Projection, err = projection(ctx, rd, &g, b.Name)
	return v, err
}

// readiness is the Ready condition: both others True.
func readiness(cred, proj conditions.Condition) conditions.Condition {
	if cred.OK && proj.OK {
		return conditions.Condition{Type: v1alpha1.ConditionReady, OK: true, Reason: v1alpha1.ReasonAllReady,
			Message: "credentials available and configuration projected"}
	}
	return conditions.Condition{Type: v1alpha1.ConditionReady, Reason: v1alpha1.ReasonNotAllReady, Message: notReadyMessage(cred, proj)}
}

func notReadyMessage(cs ...conditions.Condition) string {
	msg := ""
	for _, c := range cs {
		if !c.OK {
			if msg != "" {
				msg += "; "
			}
			msg += fmt.Sprintf("%s is False (%s)", c.Type, c.Reason)
		}
	}
	return msg
}

// SetupWithManager watches what the verdicts read: the backend's spec,
// its Glance's spec and its Deployments' specs and labels through the
// cache, Secrets through an uncached stream of metadata (package
// secretwatch), so that Secrets unrelated to Glance cost the controller
// nothing, and the backstop's periodic events. Status-only changes (a
// backend's own status write, a Glance's, a rollout's progress) are not
// inputs of the verdict and enqueue nothing.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, secretEvents, backstop <-chan event.GenericEvent) error {
	registry := ""
	if r.Clusters != nil {
		registry = r.Clusters.Namespace
	}
	c := mgr.GetClient()
	spec := builder.WithPredicates(predicate.GenerationChangedPredicate{})
	return ctrl.NewControllerManagedBy(mgr).
		Named("glancebackend").
		// Backends are judged independently; each verdict waits on a
		// live Secret read and a status write, so several run side by side.
		WithOptions(controller.Options{MaxConcurrentReconciles: 8}).
		For(&v1alpha1.GlanceBackend{}, spec).
		Watches(&v1alpha1.Glance{}, handler.EnqueueRequestsFromMapFunc(index.BackendsOfGlance(c, true)), spec).
		Watches(&appsv1.Deployment{}, handler.EnqueueRequestsFromMapFunc(index.BackendsOfGlance(c, true)),
			builder.WithPredicates(predicate.Or[client.Object](predicate.GenerationChangedPredicate{}, predicate.LabelChangedPredicate{}))).
		WatchesRawSource(source.Channel(secretEvents, handler.EnqueueRequestsFromMapFunc(index.BackendsOfSecret(c, registry)))).
		WatchesRawSource(source.Channel(backstop, &handler.EnqueueRequestForObject{})).
		Complete(r)
}
