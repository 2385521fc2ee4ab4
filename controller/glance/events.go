package glance

import (
	"context"
	"maps"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/c5c3/glance-krm/controller/conditions"
	"github.com/c5c3/glance-krm/controller/index"
	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

// Debounce is how long a change waits before its Glance is aggregated:
// the changes of its backends within it (a render that touches all of
// them) make one aggregation and one status write, not one per backend.
const Debounce = time.Second

type queue = workqueue.TypedRateLimitingInterface[reconcile.Request]

// enqueuer adds a Glance to the queue, Debounce from now (the queue folds
// the requests for one Glance that wait at the same time), once every
// backend attached to it is judged: before that, the aggregate would list
// a backend as not observed, and that backend's judgement, a moment away,
// comes back here anyway.
type enqueuer struct{ reader client.Reader }

func (e enqueuer) add(ctx context.Context, namespace, glance string, q queue) {
	backends, err := index.Backends(ctx, e.reader, namespace, glance)
	if err == nil {
		for i := range backends {
			b := &backends[i]
			if conditions.Observed(b.Status.Conditions, v1alpha1.ConditionReady, b.Generation).Reason == conditions.NotObserved {
				return
			}
		}
	}
	q.AddAfter(reconcile.Request{NamespacedName: client.ObjectKey{Namespace: namespace, Name: glance}}, Debounce)
}

// glanceEvents: a Glance is aggregated when it appears and when its spec
// changes (observedGeneration follows it), not on status writes.
type glanceEvents struct{ enqueuer }

func (h glanceEvents) Create(ctx context.Context, e event.CreateEvent, q queue) {
	h.add(ctx, e.Object.GetNamespace(), e.Object.GetName(), q)
}

func (h glanceEvents) Update(ctx context.Context, e event.UpdateEvent, q queue) {
	if e.ObjectOld.GetGeneration() != e.ObjectNew.GetGeneration() {
		h.add(ctx, e.ObjectNew.GetNamespace(), e.ObjectNew.GetName(), q)
	}
}

func (glanceEvents) Delete(context.Context, event.DeleteEvent, queue) {}

func (h glanceEvents) Generic(ctx context.Context, e event.GenericEvent, q queue) {
	h.add(ctx, e.Object.GetNamespace(), e.Object.GetName(), q)
}

// backendEvents: a backend's Glance is aggregated when what it reads of
// the backend (spec, conditions) changes, or the backend goes.
type backendEvents struct{ enqueuer }

func (h backendEvents) Create(ctx context.Context, e event.CreateEvent, q queue) {
	h.of(ctx, e.Object, q)
}

func (h backendEvents) Update(ctx context.Context, e event.UpdateEvent, q queue) {
	if backendInputChanged(e) {
		h.of(ctx, e.ObjectNew, q)
	}
}

func (h backendEvents) Delete(ctx context.Context, e event.DeleteEvent, q queue) {
	h.of(ctx, e.Object, q)
}

func (h backendEvents) Generic(ctx context.Context, e event.GenericEvent, q queue) {
	h.of(ctx, e.Object, q)
}

func (h backendEvents) of(ctx context.Context, o client.Object, q queue) {
	for _, req := range index.GlanceOfBackend(ctx, o) {
		h.add(ctx, req.Namespace, req.Name, q)
	}
}

// backendInputChanged tells an update of a backend that the aggregation
// reads: its spec (glanceRef, isDefault) or its conditions.
func backendInputChanged(e event.UpdateEvent) bool {
	o, ok1 := e.ObjectOld.(*v1alpha1.GlanceBackend)
	n, ok2 := e.ObjectNew.(*v1alpha1.GlanceBackend)
	if !ok1 || !ok2 {
		return true
	}
	return o.Generation != n.Generation || !equality.Semantic.DeepEqual(o.Status.Conditions, n.Status.Conditions)
}

// jobEvents: a Glance's schema is judged again when one of its
// glance-manage Jobs (labelled with it, carrying the openstack-release
// annotation) appears, completes, fails or goes (the status keeps the
// release a completed one migrated to; a first db-sync that goes is no
// longer running).
type jobEvents struct{ enqueuer }

func (h jobEvents) Create(ctx context.Context, e event.CreateEvent, q queue) {
	h.of(ctx, e.Object, q)
}

func (h jobEvents) Update(ctx context.Context, e event.UpdateEvent, q queue) {
	o, ok1 := e.ObjectOld.(*batchv1.Job)
	n, ok2 := e.ObjectNew.(*batchv1.Job)
	if !ok1 || !ok2 || completed(o) != completed(n) || finished(o) != finished(n) {
		h.of(ctx, e.ObjectNew, q)
	}
}

func (h jobEvents) Delete(ctx context.Context, e event.DeleteEvent, q queue) {
	h.of(ctx, e.Object, q)
}

func (h jobEvents) Generic(ctx context.Context, e event.GenericEvent, q queue) {
	h.of(ctx, e.Object, q)
}

func (h jobEvents) of(ctx context.Context, o client.Object, q queue) {
	if g := o.GetLabels()[v1alpha1.LabelGlance]; g != "" && o.GetAnnotations()[v1alpha1.AnnotationRelease] != "" {
		h.add(ctx, o.GetNamespace(), g, q)
	}
}

// recordEvents: a Glance's drains are judged again when a record of
// them (labelled drain-record and with the Glance) is written.
type recordEvents struct{ enqueuer }

func (h recordEvents) Create(ctx context.Context, e event.CreateEvent, q queue) {
	h.of(ctx, e.Object, q)
}

func (h recordEvents) Update(ctx context.Context, e event.UpdateEvent, q queue) {
	h.of(ctx, e.ObjectNew, q)
}

func (h recordEvents) Delete(ctx context.Context, e event.DeleteEvent, q queue) {
	h.of(ctx, e.Object, q)
}

func (h recordEvents) Generic(ctx context.Context, e event.GenericEvent, q queue) {
	h.of(ctx, e.Object, q)
}

func (h recordEvents) of(ctx context.Context, o client.Object, q queue) {
	if l := o.GetLabels(); l[v1alpha1.LabelComponent] == v1alpha1.ComponentDrainRecord && l[v1alpha1.LabelGlance] != "" {
		h.add(ctx, o.GetNamespace(), l[v1alpha1.LabelGlance], q)
	}
}

// deploymentEvents: status.endpoint follows whether a Deployment the
// function generated serves the Glance: one appearing, going, or
// changing its labels (taken over by hand) enqueues it; a rollout's
// progress does not.
type deploymentEvents struct{ enqueuer }

func (h deploymentEvents) Create(ctx context.Context, e event.CreateEvent, q queue) {
	h.of(ctx, e.Object, q)
}

func (h deploymentEvents) Update(ctx context.Context, e event.UpdateEvent, q queue) {
	if !maps.Equal(e.ObjectOld.GetLabels(), e.ObjectNew.GetLabels()) {
		h.of(ctx, e.ObjectOld, q)
		h.of(ctx, e.ObjectNew, q)
	}
}

func (h deploymentEvents) Delete(ctx context.Context, e event.DeleteEvent, q queue) {
	h.of(ctx, e.Object, q)
}

func (h deploymentEvents) Generic(ctx context.Context, e event.GenericEvent, q queue) {
	h.of(ctx, e.Object, q)
}

func (h deploymentEvents) of(ctx context.Context, o client.Object, q queue) {
	if g := o.GetLabels()[v1alpha1.LabelGlance]; g != "" {
		h.add(ctx, o.GetNamespace(), g, q)
	}
}
