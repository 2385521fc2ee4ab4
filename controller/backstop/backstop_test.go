package backstop

import (
	"context"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

func reader(t *testing.T, names ...string) client.Reader {
	t.Helper()
	s := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	var objs []client.Object
	for _, n := range names {
		objs = append(objs, &v1alpha1.GlanceBackend{ObjectMeta: metav1.ObjectMeta{Namespace: "openstack", Name: n}})
	}
	return fake.NewClientBuilder().WithScheme(s).WithObjects(objs...).Build()
}

// Each period, one event per backend; none before the first period ends.
func TestEveryBackendOncePerPeriod(t *testing.T) {
	events := make(chan event.GenericEvent, 16)
	b := &Backstop{Reader: reader(t, "a", "b", "c"), Period: 300 * time.Millisecond, Events: events}
	stop := start(t, b)
	select {
	case e := <-events:
		t.Fatalf("an event before the first period ended: %s", e.Object.GetName())
	case <-time.After(150 * time.Millisecond):
	}
	for round := range 2 {
		var got []string
		for range 3 {
			select {
			case e := <-events:
				got = append(got, e.Object.GetName())
			case <-time.After(5 * time.Second):
				t.Fatalf("round %d: only %v", round, got)
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, []string{"a", "b", "c"}) {
			t.Errorf("round %d judged %v, want each backend once", round, got)
		}
	}
	stop()
}

// A consumer that stops reading does not keep Start from ending.
func TestStopsWhileBlocked(t *testing.T) {
	b := &Backstop{Reader: reader(t, "a", "b"), Period: 10 * time.Millisecond, Events: make(chan event.GenericEvent)}
	stop := start(t, b)
	time.Sleep(100 * time.Millisecond)
	stop() // with an event waiting to be sent
	if !b.NeedLeaderElection() {
		t.Error("the backstop must run on the leader only")
	}
}

// start runs b; the function it returns ends it and checks that Start
// returned nil soon after.
func start(t *testing.T, b *Backstop) func() {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- b.Start(ctx) }()
	return func() {
		t.Helper()
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Start returned %v", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("Start did not return after its context ended")
		}
	}
}
