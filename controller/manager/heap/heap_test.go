// Package heap_test measures what unrelated Secrets cost the controller:
// with 10,000 Secrets of 10 KiB each in the API server, its heap must stay
// within 1.2x of its heap with none, because it caches Secrets by
// metadata only (and trims that) and reads Secret data live.
package heap_test

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/glance-krm/controller/manager"
	"github.com/c5c3/glance-krm/internal/testenv"
)

const (
	unrelatedSecrets = 10_000
	secretSize       = 10 << 10
	maxRatio         = 1.2
)

func TestHeapWithManyUnrelatedSecrets(t *testing.T) {
	testenv.APIServer(t)
	ctrl.SetLogger(logr.Discard())
	env, cfg, err := testenv.StartAPIServer()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = env.Stop() }()
	cfg.QPS, cfg.Burst = 500, 1000

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	mgr, err := manager.New(ctx, cfg, manager.Options{MetricsAddr: "0", ProbeAddr: "0", RegistryNamespace: "c5c3-clusters"})
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = mgr.Start(ctx) }()
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		t.Fatal("cache did not sync")
	}
	time.Sleep(2 * time.Second)
	before := heap()

	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "unrelated"}}
	if err := c.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	payload := []byte(strings.Repeat("x", secretSize))
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for w := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < unrelatedSecrets; i += 16 {
				s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("unrelated-%05d", i), Namespace: ns.Name},
					Data: map[string][]byte{"blob": payload}}
				if err := c.Create(ctx, s); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	t.Logf("created %d Secrets of %d KiB in %s", unrelatedSecrets, secretSize>>10, time.Since(start).Round(time.Second))

	// Let the controller's Secret stream drain: it saw each creation as
	// it happened. (Listing Secrets through the manager's cache here would
	// itself start an informer and cache them all.)
	time.Sleep(5 * time.Second)
	after := heap()
	ratio := float64(after) / float64(before)
	t.Logf("controller heap: %.1f MiB with no Secrets, %.1f MiB with %d unrelated Secrets of %d KiB: %.2fx (limit %.1fx)",
		mib(before), mib(after), unrelatedSecrets, secretSize>>10, ratio, maxRatio)
	if ratio > maxRatio {
		t.Errorf("heap grew %.2fx with unrelated Secrets, more than %.1fx", ratio, maxRatio)
	}
}

// heap is the live heap after a full collection, the median of three.
func heap() uint64 {
	var samples []uint64
	for range 3 {
		runtime.GC()
		debug.FreeOSMemory()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		samples = append(samples, m.HeapAlloc)
		time.Sleep(200 * time.Millisecond)
	}
	if samples[0] > samples[1] {
		samples[0], samples[1] = samples[1], samples[0]
	}
	if samples[1] > samples[2] {
		samples[1] = samples[2]
	}
	return max(samples[0], samples[1])
}

func mib(b uint64) float64 { return float64(b) / (1 << 20) }
