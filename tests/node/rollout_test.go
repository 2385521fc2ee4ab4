//go:build e2e

package node_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/c5c3/glance-krm/internal/testenv"
)

// rollout is what flipUnderLoad saw of the old pod it replaced.
type rollout struct {
	deleted, gone time.Time     // when the old pod was marked for deletion, and when it was gone
	logs          string        // its log, last read while it stopped
	grace         time.Duration // its termination grace period
	killAt        time.Time     // its deletionTimestamp: when the kubelet kills it
	exit          chan *corev1.ContainerStateTerminated
	transfer      chan transfer // the download running on it then
	size          int
	sum           [32]byte
}

type transfer struct {
	n   int64
	sum [32]byte
	err error
}

// flipUnderLoad flips the default store in the example, renders it again
// and applies it while a client loops uploads and downloads through the
// Service and one slow download runs on the old pod.
func (s *scenario) flipUnderLoad(t *testing.T) rollout {
	flipDefault(t, filepath.Join(s.dir, "glance.yaml"))
	objects := build(t, s.kustomize, s.dir)
	oldPods := s.apiPods(t)
	if len(oldPods) != 1 {
		t.Fatalf("%d API pods, want 1", len(oldPods))
	}
	oldConfigMaps := map[string]string{}
	for _, p := range oldPods {
		oldConfigMaps[p.Name] = mountedConfigMap(p)
	}
	dep, err := s.n.Client.AppsV1().Deployments(s.ns).Get(context.Background(), "glance", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// A download from the old pod itself (its IP, not the Service, which
	// drops it), started the moment it is told to stop: 16 MiB read at
	// 1 MiB/s, so glance is still sending when the preStop sleep ends
	// (TCP buffers hold a few MiB) and done well inside the grace period.
	ctx, cancel := withTimeout(5 * time.Minute)
	defer cancel()
	roll := rollout{transfer: make(chan transfer, 1), exit: make(chan *corev1.ContainerStateTerminated, 1), size: 16 << 20}
	data := randomBytes(t, roll.size)
	roll.sum = sha256.Sum256(data)
	id, err := s.glance.roundTrip(ctx, "graceful", data, "secondary")
	if err != nil {
		t.Fatal(err)
	}
	download := func(ip string) {
		c := &glanceClient{url: "http://" + ip + ":9292", http: s.n.HTTPClient(0), token: s.glance.token}
		dctx, dcancel := withTimeout(3 * time.Minute)
		defer dcancel()
		n, sum, err := c.slowDownload(dctx, id, 1<<20)
		roll.transfer <- transfer{n, sum, err}
	}
	defer hold(rolloutSlots)()
	loop := s.startLoop(t)
	time.Sleep(3 * time.Second)
	start := time.Now()
	s.apply(t, objects, "app.kubernetes.io/component notin (db-contract,store-drain)")
	var missing []string
	testenv.Eventually(t, 6*time.Minute, 200*time.Millisecond, "the rollout", func() error {
		pods := s.apiPods(t)
		// While an old pod runs, its ConfigMap is there.
		for _, p := range pods {
			if cm, old := oldConfigMaps[p.Name]; old {
				if p.DeletionTimestamp != nil && roll.deleted.IsZero() {
					roll.deleted = time.Now()
					roll.grace = time.Duration(ptr.Deref(p.Spec.TerminationGracePeriodSeconds, 30)) * time.Second
					roll.killAt = p.DeletionTimestamp.Time
					go download(p.Status.PodIP)
					go s.watchExit(p.Name, roll.exit)
				}
				if p.DeletionTimestamp != nil {
					if out, err := s.n.Kubectl(nil, "-n", s.ns, "logs", p.Name, "-c", "glance-api", "--tail=15"); err == nil {
						roll.logs = string(out)
					}
				}
				if _, err := s.n.Client.CoreV1().ConfigMaps(s.ns).Get(context.Background(), cm, metav1.GetOptions{}); err != nil {
					missing = append(missing, fmt.Sprintf("%s (pod %s): %v", cm, p.Name, err))
				}
			}
		}
		if !slices.ContainsFunc(pods, func(p corev1.Pod) bool { return p.Name == oldPods[0].Name }) && roll.gone.IsZero() {
			roll.gone = time.Now()
		}
		return s.rolledOut(dep.Generation, oldPods)
	})
	if roll.gone.IsZero() {
		roll.gone = time.Now()
	}
	rolled := time.Since(start)
	time.Sleep(3 * time.Second)
	ok, failed, errs, slowest := loop.finish()
	bench.record(s.rel.name, func(b *releaseBench) { b.rollout, b.requests, b.failed, b.slowest = rolled, ok, failed, slowest })
	if failed > 0 {
		t.Errorf("%d of %d requests failed during the default flip (rollout from %s): first %s; last %s", failed, ok+failed,
			start.Format("15:04:05.000"), strings.Join(errs[:min(3, len(errs))], "; "), errs[len(errs)-1])
	}
	if ok == 0 {
		t.Error("no request went through during the flip")
	}
	if len(missing) > 0 {
		t.Errorf("an old pod's ConfigMap was gone while the pod ran: %v", missing)
	}
	qctx, qcancel := withTimeout(time.Minute)
	defer qcancel()
	stores, err := s.glance.stores(qctx)
	if err != nil || !stores["secondary"] || stores["primary"] {
		t.Errorf("after the flip GET /v2/info/stores: %v, %v; want secondary the default", stores, err)
	}
	after, err := s.glance.roundTrip(qctx, "after-flip", randomBytes(t, 1<<20), "")
	if err != nil {
		t.Fatal(err)
	}
	if !s.inBucket(t, bucket(s.rel, 2), after) {
		t.Errorf("an upload without a store header after the flip is not in the new default's bucket %s", bucket(s.rel, 2))
	}
	// The new config's contract Job, after the rollout: a no-op on the
	// contracted schema, which must still complete.
	s.contract(t, objects)
	return roll
}

// flipDefault makes the other of the example's two stores the default.
func flipDefault(t *testing.T, glance string) {
	t.Helper()
	b, err := os.ReadFile(glance)
	if err != nil {
		t.Fatal(err)
	}
	flipped := bytes.Replace(bytes.Replace(b, []byte("isDefault: true"), []byte("isDefault: was-true"), 1), []byte("isDefault: false"), []byte("isDefault: true"), 1)
	flipped = bytes.Replace(flipped, []byte("isDefault: was-true"), []byte("isDefault: false"), 1)
	if err := os.WriteFile(glance, flipped, 0o644); err != nil {
		t.Fatal(err)
	}
}

// stoppedGracefully: the download running on the old pod when it was
// told to stop finished whole, and the pod was gone well before its grace
// period (45 s in examples/node) ended, which it would not have been if SIGTERM did not
// stop glance-api (uWSGI 2.0 reloads on it) or the kubelet had to kill it.
func (s *scenario) stoppedGracefully(t *testing.T, roll rollout) {
	if roll.transfer == nil {
		t.Fatal("the flip did not run")
	}
	select {
	case r := <-roll.transfer:
		if r.err != nil || r.n != int64(roll.size) || r.sum != roll.sum {
			t.Errorf("the transfer running when the old pod stopped: %d of %d bytes, same bytes %v, %v; the old pod's log:\n%s", r.n, roll.size, r.sum == roll.sum, r.err, roll.logs)
		}
	case <-time.After(2 * time.Minute):
		t.Errorf("the transfer running on the old pod did not end; its log:\n%s", roll.logs)
	}
	if roll.deleted.IsZero() || roll.gone.IsZero() {
		t.Fatalf("the old pod's stop was not seen (deleted %v, gone %v)", roll.deleted, roll.gone)
	}
	// How glance-api ended, as the kubelet reported it: killed (137) at
	// the deletionTimestamp, or exited on its own before it.
	select {
	case term := <-roll.exit:
		if term != nil {
			early := roll.killAt.Sub(term.FinishedAt.Time)
			if term.ExitCode == 137 || early < 2*time.Second {
				t.Errorf("glance-api ended with exit code %d (%s) %s before the kubelet's kill time: it did not stop on SIGTERM; its log then:\n%s", term.ExitCode, term.Reason, early, roll.logs)
			} else {
				t.Logf("glance-api exited with code %d, %s before the kubelet would have killed it; the pod was gone %s after it was told to stop", term.ExitCode, early, roll.gone.Sub(roll.deleted).Round(100*time.Millisecond))
			}
			return
		}
	case <-time.After(10 * time.Second):
	}
	t.Log("the kubelet's report of how glance-api ended was not seen; judging by when the pod was gone")
	// The kubelet kills at the grace period; a pod gone 5 s before it
	// stopped on its own.
	if took := roll.gone.Sub(roll.deleted); took > roll.grace-5*time.Second {
		t.Errorf("the old pod took %s to stop: glance-api did not stop on SIGTERM well within its %s grace period; its log then:\n%s", took.Round(time.Second), roll.grace, roll.logs)
	} else {
		t.Logf("the old pod stopped %s after it was told to", took.Round(100*time.Millisecond))
	}
}

// watchExit sends how the pod's glance-api container terminated, as the
// kubelet reports it before the pod is removed (nil if it never did).
func (s *scenario) watchExit(pod string, out chan<- *corev1.ContainerStateTerminated) {
	ctx, cancel := withTimeout(3 * time.Minute)
	defer cancel()
	var last *corev1.ContainerStateTerminated
	defer func() { out <- last }()
	w, err := s.n.Client.CoreV1().Pods(s.ns).Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + pod})
	if err != nil {
		return
	}
	defer w.Stop()
	for ev := range w.ResultChan() {
		p, ok := ev.Object.(*corev1.Pod)
		if !ok {
			continue
		}
		for _, c := range p.Status.ContainerStatuses {
			if c.Name == "glance-api" && c.State.Terminated != nil {
				last = c.State.Terminated.DeepCopy()
			}
		}
		if ev.Type == "DELETED" {
			return
		}
	}
}

func mountedConfigMap(p corev1.Pod) string {
	for _, v := range p.Spec.Volumes {
		if v.Projected == nil {
			continue
		}
		for _, src := range v.Projected.Sources {
			if src.ConfigMap != nil {
				return src.ConfigMap.Name
			}
		}
	}
	return ""
}

// rolledOut: the Deployment has observed generation after gen, all its
// replicas are updated and available, and no old pod is left.
func (s *scenario) rolledOut(gen int64, old []corev1.Pod) error {
	d, err := s.n.Client.AppsV1().Deployments(s.ns).Get(context.Background(), "glance", metav1.GetOptions{})
	if err != nil {
		return err
	}
	if d.Status.ObservedGeneration <= gen || !complete(d) {
		return fmt.Errorf("deployment status %+v", d.Status)
	}
	for _, p := range old {
		if _, err := s.n.Client.CoreV1().Pods(s.ns).Get(context.Background(), p.Name, metav1.GetOptions{}); err == nil {
			return fmt.Errorf("old pod %s is still there", p.Name)
		}
	}
	return nil
}

func complete(d *appsv1.Deployment) bool {
	want := int32(1)
	if d.Spec.Replicas != nil {
		want = *d.Spec.Replicas
	}
	return d.Status.UpdatedReplicas == want && d.Status.AvailableReplicas == want && d.Status.Replicas == want
}
