// Package backstop judges every GlanceBackend again once per period, for
// changes no watch delivered (the contract's "polled as a backstop"): a
// Secret or Deployment on a target cluster, a missed event. It replaces
// the informers' resync, which re-delivered every object of every cache
// (backends, Glances, Deployments) and so judged each backend three
// times per period.
package backstop

import (
	"context"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

// DefaultPeriod is how often each backend is judged again.
const DefaultPeriod = 10 * time.Minute

// Backstop sends one event per GlanceBackend (read from the cache) every
// Period; the first round comes one period after start.
type Backstop struct {
	Reader client.Reader
	Period time.Duration
	Events chan<- event.GenericEvent
}

// NeedLeaderElection: only the leader judges.
func (b *Backstop) NeedLeaderElection() bool { return true }

// Start runs until ctx ends.
func (b *Backstop) Start(ctx context.Context) error {
	t := time.NewTicker(b.Period)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		var list v1alpha1.GlanceBackendList
		if err := b.Reader.List(ctx, &list); err != nil {
			continue
		}
		for i := range list.Items {
			select {
			case b.Events <- event.GenericEvent{Object: &list.Items[i]}:
			case <-ctx.Done():
				return nil
			}
		}
	}
}
