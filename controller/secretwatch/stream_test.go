package secretwatch

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	metadatafake "k8s.io/client-go/metadata/fake"
	clienttesting "k8s.io/client-go/testing"
	"sigs.k8s.io/controller-runtime/pkg/event"
)

// The stream passes every add, update and delete of a Secret's metadata
// on, in order, from the version the first list names, and ends with its
// context (a real API server drives it in controller/manager's tests).
func TestStreamPassesChangesOn(t *testing.T) {
	c := metadatafake.NewSimpleMetadataClient(metadatafake.NewTestScheme())
	c.PrependReactor("list", "secrets", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, &metav1.List{ListMeta: metav1.ListMeta{ResourceVersion: "7"}}, nil
	})
	watches := make(chan *watch.FakeWatcher, 4)
	opened := make(chan string, 4)
	c.PrependWatchReactor("secrets", func(a clienttesting.Action) (bool, watch.Interface, error) {
		w := watch.NewFakeWithChanSize(8, false)
		opened <- a.(clienttesting.WatchActionImpl).WatchRestrictions.ResourceVersion
		watches <- w
		return true, w, nil
	})
	events := make(chan event.GenericEvent, 8)
	s := &Stream{Client: c, Events: events}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Start(ctx) }()
	var w *watch.FakeWatcher
	select {
	case w = <-watches:
	case <-time.After(5 * time.Second):
		t.Fatal("no watch was opened")
	}
	if rv := <-opened; rv != "7" {
		t.Errorf("the watch started from version %q, want the list's 7", rv)
	}
	secret := func(name, rv string) *metav1.PartialObjectMetadata {
		return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "openstack", Name: name, ResourceVersion: rv}}
	}
	w.Add(secret("a", "8"))
	w.Modify(secret("a", "9"))
	w.Delete(secret("b", "10"))
	for _, want := range []string{"a", "a", "b"} {
		select {
		case e := <-events:
			if e.Object.GetName() != want {
				t.Errorf("event for %s, want %s", e.Object.GetName(), want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("no event for %s", want)
		}
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Start returned %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Start did not return after its context ended")
	}
	if !s.NeedLeaderElection() {
		t.Error("the stream must run on the leader only")
	}
}
