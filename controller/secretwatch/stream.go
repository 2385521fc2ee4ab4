// Package secretwatch streams Secret changes to the controllers without
// caching a single Secret. An informer, even a metadata-only one, keeps an
// entry per Secret in the cluster: some 500 bytes each, which with 10,000
// unrelated Secrets more than doubles the controller's heap. A plain watch
// on Secret metadata passes each change through and keeps nothing; the
// reconcilers map it to the backends that reference the Secret through a
// field index of their own (small) cache, and read Secret data live.
package secretwatch

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
)

// Stream is a manager Runnable that sends every Secret add, update and
// delete, as metadata, to Events.
type Stream struct {
	Client metadata.Interface
	Events chan event.GenericEvent
}

var secrets = corev1.SchemeGroupVersion.WithResource("secrets")

// NeedLeaderElection: only the leader reconciles, so only it listens.
func (s *Stream) NeedLeaderElection() bool { return true }

// Start watches until ctx ends. A watch whose resource version expired is
// restarted from the current one; changes in between are caught by the
// reconcilers' periodic resync, the contract's polling backstop.
func (s *Stream) Start(ctx context.Context) error {
	log := ctrl.LoggerFrom(ctx).WithName("secretwatch")
	for ctx.Err() == nil {
		if err := s.watchOnce(ctx); err != nil && ctx.Err() == nil {
			log.Error(err, "watching Secret metadata; restarting")
			select {
			case <-ctx.Done():
			case <-time.After(2 * time.Second):
			}
		}
	}
	return nil
}

func (s *Stream) watchOnce(ctx context.Context) error {
	// The current resource version, without listing every Secret.
	list, err := s.Client.Resource(secrets).List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil {
		return err
	}
	w, err := watchtools.NewRetryWatcherWithContext(ctx, list.ResourceVersion, &cache.ListWatch{
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.AllowWatchBookmarks = true
			return s.Client.Resource(secrets).Watch(ctx, o)
		},
	})
	if err != nil {
		return err
	}
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-w.ResultChan():
			if !ok {
				return nil
			}
			switch ev.Type {
			case watch.Added, watch.Modified, watch.Deleted:
				if obj, ok := ev.Object.(client.Object); ok {
					select {
					case s.Events <- event.GenericEvent{Object: obj}:
					case <-ctx.Done():
						return nil
					}
				}
			case watch.Error:
				return nil // expired: start over from the current version
			}
		}
	}
}
