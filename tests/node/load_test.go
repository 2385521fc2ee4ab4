//go:build e2e

package node_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// loadTransfers is how many transfers run at once in underLoad, and
// loadHold how long they are held: longer than the liveness probe's
// period × failure threshold (a minute), so a probe starved by them would
// have restarted the pod.
const (
	loadTransfers = 8
	loadHold      = 75 * time.Second
	loadRate      = 64 << 10  // bytes per second each download reads
	uploadRate    = 256 << 10 // and each upload sends: in the hold far more than the sockets between client and glance buffer
)

func (s *scenario) underLoad(t *testing.T) {
	defer hold(loadSlots)()
	ctx, cancel := withTimeout(5 * time.Minute)
	defer cancel()
	id, err := s.glance.roundTrip(ctx, "large", randomBytes(t, 48<<20), "")
	if err != nil {
		t.Fatal(err)
	}
	before := s.apiPods(t)
	if len(before) != 1 {
		t.Fatalf("%d API pods, want 1", len(before))
	}
	hold, stop := context.WithTimeout(ctx, loadHold)
	defer stop()
	var wg sync.WaitGroup
	errs := make(chan error, 2*loadTransfers)
	for range loadTransfers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// A fresh connection each: the transfers run side by side,
			// each reading throughout the hold (one queued behind the
			// others would read nothing and end at the deadline too).
			c := &glanceClient{url: s.glance.url, http: s.n.HTTPClient(0), token: s.glance.token}
			n, _, err := c.slowDownload(hold, id, loadRate)
			// Ended by the hold, however the client reports it (a
			// write on the connection it closed, or the deadline).
			switch {
			case hold.Err() == nil:
				errs <- fmt.Errorf("a transfer ended before the hold (%d bytes): %w", n, err)
			case n < loadRate*int64(loadHold/time.Second)/2:
				errs <- fmt.Errorf("a download read %d bytes in %s at %d B/s: it waited for a free worker instead of running beside the others", n, loadHold, loadRate)
			}
		}()
		// And as many uploads, which hold a worker for as long as the
		// client sends (a download is read out of glance into the uWSGI
		// router's buffers, and frees its worker early).
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := &glanceClient{url: s.glance.url, http: s.n.HTTPClient(0), token: s.glance.token}
			n, err := c.slowUpload(hold, uploadRate)
			switch {
			case hold.Err() == nil:
				errs <- fmt.Errorf("an upload ended before the hold (%d bytes): %w", n, err)
			case n < uploadRate*int64(loadHold/time.Second)/2:
				errs <- fmt.Errorf("an upload sent %d bytes in %s at %d B/s: it waited for a free worker instead of running beside the others", n, loadHold, uploadRate)
			}
		}()
	}
	// Meanwhile the pod stays Ready, is not restarted, and still answers.
	for deadline := time.Now().Add(loadHold - 5*time.Second); time.Now().Before(deadline); time.Sleep(3 * time.Second) {
		for _, p := range s.apiPods(t) {
			if p.Name != before[0].Name || !ready(p) || restarts(p) > restarts(before[0]) {
				t.Errorf("under load: pod %s ready=%v restarts=%d (before: %s, %d restarts)", p.Name, ready(p), restarts(p), before[0].Name, restarts(before[0]))
				return
			}
		}
	}
	qctx, qcancel := withTimeout(20 * time.Second)
	defer qcancel()
	if _, err := s.glance.stores(qctx); err != nil {
		t.Errorf("a request beside %d transfers: %v", loadTransfers, err)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// clientLoop uploads and downloads small images through the Service until
// stopped, counting what succeeded and what failed.
type clientLoop struct {
	ok, failed atomic.Int64
	mu         sync.Mutex
	errs       []string
	slowest    time.Duration
	stop       chan struct{}
	done       chan struct{}
}

// startLoop's requests name the secondary store, whose credentials every
// pod of the rollout has (the primary's Secret is gone by then: the old
// pods hold its keys, the new ones do not, and an image in it reads only
// on the old ones).
func (s *scenario) startLoop(t *testing.T) *clientLoop {
	return s.startLoopAfter(t, func(<-chan struct{}) {})
}

// startLoopWhenAvailable starts the loop now; its first request goes
// once the Deployment is first Available (a GitOps engine creates it).
func (s *scenario) startLoopWhenAvailable(t *testing.T) *clientLoop {
	return s.startLoopAfter(t, func(stop <-chan struct{}) {
		for {
			d, err := s.n.Client.AppsV1().Deployments(s.ns).Get(context.Background(), "glance", metav1.GetOptions{})
			if err == nil && available(d) {
				return
			}
			select {
			case <-stop:
				return
			case <-time.After(time.Second):
			}
		}
	})
}

func (s *scenario) startLoopAfter(t *testing.T, wait func(stop <-chan struct{})) *clientLoop {
	l := &clientLoop{stop: make(chan struct{}), done: make(chan struct{})}
	data := randomBytes(t, 256<<10)
	go func() {
		defer close(l.done)
		wait(l.stop)
		for i := 0; ; i++ {
			select {
			case <-l.stop:
				return
			default:
			}
			// A generous limit: what fails is an error, not a node busy
			// starting glance for five releases at once.
			began := time.Now()
			ctx, cancel := withTimeout(3 * time.Minute)
			_, err := s.glance.roundTrip(ctx, fmt.Sprintf("loop-%d", i), data, "secondary")
			cancel()
			l.mu.Lock()
			l.slowest = max(l.slowest, time.Since(began))
			l.mu.Unlock()
			if err != nil {
				l.failed.Add(1)
				l.mu.Lock()
				l.errs = append(l.errs, time.Now().Format("15:04:05.000")+" "+err.Error())
				l.mu.Unlock()
				time.Sleep(250 * time.Millisecond) // as a client would, not a busy loop
			} else {
				l.ok.Add(1)
			}
		}
	}()
	return l
}

func (l *clientLoop) finish() (ok, failed int64, errs []string, slowest time.Duration) {
	close(l.stop)
	<-l.done
	return l.ok.Load(), l.failed.Load(), l.errs, l.slowest
}
