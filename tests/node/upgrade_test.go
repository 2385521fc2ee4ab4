//go:build e2e

package node_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// upgradeChain is the releases an engine's Glance is upgraded through, one
// commit each, oldest first: every adjacent pair the node runs from
// Debian's trixie on.
var upgradeChain = []string{"2025.1", "2025.2", "2026.1", "2026.2"}

// stored is an image the test wrote and the sum of its bytes.
type stored struct {
	id, store string
	sum       [32]byte
}

// mixedWindow is what one rollout from one release to the next showed
// while a pod of each served: every earlier image read through each, and
// an image written through the new pod read through the old one.
type mixedWindow struct {
	seen     bool
	failures []string
}

// upgradeTo edits the Glance to release to (openStackRelease and the
// image), and returns what a commit of it must be checked against.
func (s *scenario) upgradeTo(t *testing.T, to release) {
	t.Helper()
	from := s.rel
	s.edit(t, `openStackRelease: "`+from.name+`"`, `openStackRelease: "`+to.name+`"`)
	s.edit(t, `tag: "`+from.name+`"`, `tag: "`+to.name+`"`)
}

// upgradeThrough is one release upgrade through an engine under traffic:
// images written first (added to images, which every later upgrade reads
// again), the Glance edited to release to and handed to the engine by
// apply (a commit, a publication), the engine waited for by done; in the
// mixed window every image reads through a pod of each release and one
// the new pod writes reads through the old; then the order is read from
// the cluster and every image through the Service.
func (s *scenario) upgradeThrough(t *testing.T, images *[]stored, to release, apply func(*testing.T) time.Time, done func(*testing.T)) {
	from := s.rel
	*images = append(*images, s.writeImages(t, "before-"+to.name)...)
	finish := s.watchMixedWindow(t, glanceImage+":"+from.name, glanceImage+":"+to.name, *images)
	s.upgradeTo(t, to)
	defer hold(rolloutSlots)()
	began := apply(t)
	done(t)
	w := finish()
	s.rel = to
	gitopsBench.record(s.engine, to.name, "upgrade from "+from.name, time.Since(began))
	s.orderFromCluster(t)
	s.readAll(t, *images)
	if !w.seen {
		t.Errorf("no moment with a pod of %s running and one of %s ready was seen", from.name, to.name)
	}
	t.Logf("mixed window %s → %s: %d images read through a pod of each (%d failed), one written by the new pod read by the old", from.name, to.name, len(*images), len(w.failures))
	for _, f := range w.failures {
		t.Errorf("in the mixed window %s → %s: %s", from.name, to.name, f)
	}
	s.controllerReady(t)
}

// writeImages uploads an image into each store through the Service.
func (s *scenario) writeImages(t *testing.T, prefix string) []stored {
	t.Helper()
	ctx, cancel := withTimeout(2 * time.Minute)
	defer cancel()
	var out []stored
	for _, store := range []string{"primary", "secondary"} {
		data := randomBytes(t, 1<<20)
		id, err := s.glance.roundTrip(ctx, prefix+"-"+store, data, store)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, stored{id: id, store: store, sum: sha256.Sum256(data)})
	}
	return out
}

// watchMixedWindow polls the API pods until finish is called; the first
// time a pod of the new image is ready while one of the old image still
// runs, it reads every image through both pods' addresses and writes one
// through the new pod that the old pod then reads. From the moment a new
// pod appears it holds a slow download open on the old pod: the preStop
// hook waits for open transfers (docs/workload.md), so the old pod keeps
// serving after the rollout told it to stop, long enough for those reads
// (without it the eventlet server could close its socket a few seconds in,
// before the reads reached it).
func (s *scenario) watchMixedWindow(t *testing.T, oldImage, newImage string, images []stored) (finish func() mixedWindow) {
	var w mixedWindow
	stop, done := make(chan struct{}), make(chan struct{})
	var anchor *anchorDownload
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			case <-time.After(200 * time.Millisecond):
			}
			pods, err := s.n.Client.CoreV1().Pods(s.ns).List(context.Background(), metav1.ListOptions{
				LabelSelector: "app.kubernetes.io/instance=glance,app.kubernetes.io/component=api"})
			if err != nil {
				continue
			}
			var oldPod, newPod *corev1.Pod
			newSeen := false
			for i := range pods.Items {
				p := &pods.Items[i]
				switch image := glanceImageOf(*p); {
				case image == oldImage && p.Status.PodIP != "":
					oldPod = p
				case image == newImage:
					newSeen = true
					if ready(*p) {
						newPod = p
					}
				}
			}
			if oldPod != nil && newSeen && len(images) > 0 && (anchor == nil || anchor.ended()) {
				anchor = s.holdOpen(oldPod, images[0].id)
			}
			if oldPod != nil && newPod != nil {
				w = mixedWindow{seen: true, failures: s.readThrough(t, images, oldPod, newPod)}
				return
			}
		}
	}()
	return func() mixedWindow {
		close(stop)
		<-done
		if anchor != nil {
			anchor.release()
		}
		return w
	}
}

// anchorDownload is a download read slowly from one pod.
type anchorDownload struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// holdOpen starts reading image id from pod p at 16 KiB/s (a 1 MiB image:
// about a minute).
func (s *scenario) holdOpen(p *corev1.Pod, id string) *anchorDownload {
	ctx, cancel := context.WithCancel(context.Background())
	a := &anchorDownload{cancel: cancel, done: make(chan struct{})}
	c := &glanceClient{url: "http://" + p.Status.PodIP + ":9292", http: s.n.HTTPClient(0), token: s.glance.token}
	go func() {
		defer close(a.done)
		_, _, _ = c.slowDownload(ctx, id, 16<<10)
	}()
	return a
}

func (a *anchorDownload) ended() bool {
	select {
	case <-a.done:
		return true
	default:
		return false
	}
}

func (a *anchorDownload) release() {
	a.cancel()
	<-a.done
}

// readThrough reads every image through each pod, the old pod first,
// then writes an image through the new pod that the old pod must read.
func (s *scenario) readThrough(t *testing.T, images []stored, oldPod, newPod *corev1.Pod) []string {
	ctx, cancel := withTimeout(2 * time.Minute)
	defer cancel()
	client := func(p *corev1.Pod) *glanceClient {
		return &glanceClient{url: "http://" + p.Status.PodIP + ":9292", http: s.n.HTTPClient(0), token: s.glance.token}
	}
	var failures []string
	for _, p := range []*corev1.Pod{oldPod, newPod} {
		for _, img := range images {
			sum, _, err := client(p).sum(ctx, img.id)
			if err != nil || sum != img.sum {
				failures = append(failures, fmt.Sprintf("image %s (%s) through pod %s (%s): %v", img.id, img.store, p.Name, glanceImageOf(*p), err))
			}
		}
	}
	data := randomBytes(t, 256<<10)
	id, err := client(newPod).roundTrip(ctx, "mixed-window", data, "secondary")
	if err != nil {
		failures = append(failures, fmt.Sprintf("an upload through the new pod %s: %v", newPod.Name, err))
	} else if sum, _, err := client(oldPod).sum(ctx, id); err != nil || sum != sha256.Sum256(data) {
		failures = append(failures, fmt.Sprintf("image %s written by the new pod %s, read through the old pod %s: %v", id, newPod.Name, oldPod.Name, err))
	}
	return failures
}

func glanceImageOf(p corev1.Pod) string {
	for _, c := range p.Spec.Containers {
		if c.Name == "glance-api" {
			return c.Image
		}
	}
	return ""
}

// readAll reads every image through the Service.
func (s *scenario) readAll(t *testing.T, images []stored) {
	t.Helper()
	ctx, cancel := withTimeout(2 * time.Minute)
	defer cancel()
	for _, img := range images {
		sum, _, err := s.glance.sum(ctx, img.id)
		if err != nil || sum != img.sum {
			t.Errorf("image %s (%s) after the upgrade: %v", img.id, img.store, err)
		}
	}
}
