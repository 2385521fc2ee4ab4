package backend

import (
	"context"
	"sync"

	"golang.org/x/sync/singleflight"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

// sections remembers the store sections of rendered backends Secrets. A
// rendered Secret is immutable and named by its content, so what its
// name held once it holds for good: each is read and parsed once, not
// once per sibling backend and reconcile.
type sections struct {
	mu       sync.Mutex
	byID     map[string]map[string]bool
	inFlight singleflight.Group // siblings judged side by side read once
}

// maxRemembered bounds the memory: a cluster keeps at most a few rendered
// Secrets per Glance; past this many, the oldest knowledge is dropped
// wholesale and read again on demand.
const maxRemembered = 8192

// parseError is a backends.conf that does not parse.
type parseError struct{ error }

// read returns the store sections of a rendered backends Secret: known
// already, or read live once for every backend asking at the same time.
func (c *sections) read(ctx context.Context, cluster string, r client.Reader, namespace, name string) (map[string]bool, error) {
	id := cluster + "/" + namespace + "/" + name
	if s, ok := c.get(id); ok {
		return s, nil
	}
	v, err, _ := c.inFlight.Do(id, func() (any, error) {
		var s corev1.Secret
		if err := r.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, &s); err != nil {
			return nil, err
		}
		found, err := c.parse(id, &s)
		if err != nil {
			return nil, parseError{err}
		}
		return found, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(map[string]bool), nil
}

func (c *sections) get(id string) (map[string]bool, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s, ok := c.byID[id]
	return s, ok
}

// parse reads a backends Secret's sections, remembering them when the
// Secret is immutable.
func (c *sections) parse(id string, s *corev1.Secret) (map[string]bool, error) {
	conf, err := v1alpha1.ReadRenderedINI(s.Data[v1alpha1.KeyBackendsConf])
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for name := range conf {
		out[name] = true
	}
	if s.Immutable != nil && *s.Immutable {
		c.mu.Lock()
		if c.byID == nil || len(c.byID) >= maxRemembered {
			c.byID = map[string]map[string]bool{}
		}
		c.byID[id] = out
		c.mu.Unlock()
	}
	return out, nil
}
