package manager_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	eventsv1 "k8s.io/api/events/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

// skippedEvents counts the GlanceBackendSkipped warnings about one
// backend in a namespace, a folded series counting as its repeats.
func skippedEvents(t *testing.T, ns, backend string) int {
	t.Helper()
	return countEvents(t, ns, func(e eventsv1.Event) bool {
		return e.Reason == v1alpha1.EventReasonGlanceBackendSkipped && strings.Contains(e.Note, fmt.Sprintf("%q", backend))
	})
}

// countEvents counts a namespace's events that match, a folded series
// counting as its repeats.
func countEvents(t *testing.T, ns string, match func(eventsv1.Event) bool) int {
	t.Helper()
	var list eventsv1.EventList
	if err := k8s.List(context.Background(), &list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range list.Items {
		if match(e) {
			n++
			if e.Series != nil {
				n += int(e.Series.Count) - 1
			}
		}
	}
	return n
}

// TestSkippedEventOnlyOnTransition: a backend that stays pending for the
// same reason is reported once, however often the Glance's status
// changes for other backends; a new reason is a new warning.
func TestSkippedEventOnlyOnTransition(t *testing.T) {
	ns := namespace(t)
	g := glance(ns, "glance")
	create(t, g, backend(ns, "lonely", "glance", true, "lonely-creds"))
	wantCondition(t, g, v1alpha1.ConditionBackendsReady, F, v1alpha1.ReasonNoDefaultBackend)
	eventually(t, "one warning about lonely", func() error {
		if n := skippedEvents(t, ns, "lonely"); n != 1 {
			return fmt.Errorf("%d warnings", n)
		}
		return nil
	})
	// Three more pending backends: three more status writes of the Glance.
	for _, name := range []string{"b2", "b3", "b4"} {
		create(t, backend(ns, name, "glance", false, name+"-creds"))
		eventually(t, "a warning about "+name, func() error {
			if n := skippedEvents(t, ns, name); n != 1 {
				return fmt.Errorf("%d warnings", n)
			}
			return nil
		})
	}
	if n := skippedEvents(t, ns, "lonely"); n != 1 {
		t.Errorf("lonely, pending for the same reason throughout, drew %d warnings, want 1", n)
	}
	// lonely's credentials arrive, but nothing mounts it: a new reason.
	create(t, credentialsSecret(ns, "lonely-creds", "a", "s"))
	eventually(t, "a second warning about lonely, for its new reason", func() error {
		if n := skippedEvents(t, ns, "lonely"); n != 2 {
			return fmt.Errorf("%d warnings", n)
		}
		return nil
	})
}

// reconciles counts a controller's reconciles of objects in one
// namespace, from controller-runtime's own "Reconciling" debug lines (the
// suite logs at every level): the metrics count every namespace, and
// other tests' objects requeue on their own schedules.
func reconciles(t *testing.T, controllerName, ns string) int {
	t.Helper()
	n := 0
	for _, line := range strings.Split(logs.String(), "\n") {
		if strings.Contains(line, "\tReconciling\t") && strings.Contains(line, `"controller": "`+controllerName+`"`) &&
			strings.Contains(line, `"namespace": "`+ns+`"`) {
			n++
		}
	}
	return n
}

// settled waits until a controller has not reconciled anything of the
// namespace for two seconds and returns its count.
func settled(t *testing.T, controllerName, ns string) int {
	t.Helper()
	last := reconciles(t, controllerName, ns)
	for range 30 {
		time.Sleep(2 * time.Second)
		now := reconciles(t, controllerName, ns)
		if now == last {
			return now
		}
		last = now
	}
	t.Fatalf("%s never settled", controllerName)
	return 0
}

// TestStatusOnlyWritesEnqueueNothing: a status-only write to a Glance
// (another writer's runtime status) or to a Deployment (a rollout's
// progress) re-queues none of its backends; a change of the Glance's spec
// does; and no status write is logged as an error.
func TestStatusOnlyWritesEnqueueNothing(t *testing.T) {
	ns := namespace(t)
	g := glance(ns, "glance")
	var backends []client.Object
	for _, n := range []string{"a", "b", "c"} {
		backends = append(backends, backend(ns, n, "glance", n == "a", "s3-credentials"))
	}
	sec, d := wired(ns, "glance", "a", "b", "c")
	create(t, append(backends, g, credentialsSecret(ns, "s3-credentials", "a", "s"), sec, d)...)
	wantCondition(t, g, v1alpha1.ConditionBackendsReady, T, v1alpha1.ReasonAllBackendsProjected)
	before := settled(t, "glancebackend", ns)

	// Status only: the seed operator's runtime status, a rollout's progress.
	if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(g), g); err != nil {
		t.Fatal(err)
	}
	gPatch := client.MergeFrom(g.DeepCopy())
	g.Status.Endpoint = "http://glance.example:9292/"
	if err := k8s.Status().Patch(context.Background(), g, gPatch); err != nil {
		t.Fatal(err)
	}
	dPatch := client.MergeFrom(d.DeepCopy())
	d.Status.ObservedGeneration, d.Status.Replicas = 1, 1
	if err := k8s.Status().Patch(context.Background(), d, dPatch); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * time.Second)
	if n := reconciles(t, "glancebackend", ns) - before; n != 0 {
		t.Errorf("%d backend reconciles after status-only writes, want 0", n)
	}

	update(t, g, func() { g.Spec.KeystoneEndpoint = "http://keystone.example:5000/v3" })
	eventually(t, "the Glance's spec change re-judges its three backends", func() error {
		if n := reconciles(t, "glancebackend", ns) - before; n < 3 {
			return fmt.Errorf("%d reconciles", n)
		}
		return nil
	})
	for _, line := range strings.Split(logs.String(), "\n") {
		if strings.Contains(line, "Reconciler error") {
			t.Errorf("an error logged: %s", line)
		}
	}
}

// TestUnrelatedDeploymentsAreNotCached: the controller's cache holds the
// Deployments glance-krm labelled, not the cluster's others.
func TestUnrelatedDeploymentsAreNotCached(t *testing.T) {
	ns := namespace(t)
	_, ours := wired(ns, "glance", "a")
	other := ours.DeepCopy()
	other.Name, other.Labels = "unrelated", map[string]string{"app": "unrelated"}
	create(t, ours, other)
	eventually(t, "the labelled Deployment in the cache", func() error {
		var list appsv1.DeploymentList
		if err := controller.GetCache().List(context.Background(), &list, client.InNamespace(ns)); err != nil {
			return err
		}
		var names []string
		for _, d := range list.Items {
			names = append(names, d.Name)
		}
		if fmt.Sprint(names) != "[glance]" {
			return fmt.Errorf("cached: %v", names)
		}
		return nil
	})
}
