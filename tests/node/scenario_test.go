//go:build e2e

package node_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/utils/ptr"

	"github.com/c5c3/glance-krm/internal/testenv"
	"github.com/c5c3/glance-krm/internal/testenv/node"
)

// scenario is one release's run on the node.
type scenario struct {
	t         *testing.T
	n         *node.Node
	rel       release
	s3        *minio.Client
	kustomize string
	fnBin     string
	dir       string // the example, rewritten for this release
	ns        string
	glance    *glanceClient
	keystone  *keystoneClient // when the Glance runs behind Keystone
	engine    string          // the GitOps engine that syncs it, if one does
	dyn       dynamic.Interface
}

// check runs one named assertion as a subtest and counts it; a failed
// check ends the release's run when stop is true (later ones need it).
func (s *scenario) check(name string, stop bool, f func(t *testing.T)) {
	ok := s.t.Run(name, f)
	label := s.rel.name + " (" + s.rel.suite + ")"
	if s.engine != "" {
		label = s.engine + ", " + label
	}
	tally.record(label, ok)
	if !ok {
		s.t.Logf("after %q failed, the API pods' logs:\n%s", name, s.logs())
	}
	if !ok && stop {
		s.t.FailNow()
	}
}

// logs are the last lines of every container of the API pods and Jobs.
func (s *scenario) logs() string {
	out, _ := s.n.Kubectl(nil, "-n", s.ns, "logs", "-l", "app.kubernetes.io/name=glance", "--all-containers", "--prefix", "--tail=40", "--max-log-requests=20")
	return string(out)
}

func (s *scenario) run() {
	s.ns = namespace(s.rel)
	s.glance = &glanceClient{url: "http://glance." + s.ns + ".svc:9292", http: s.n.HTTPClient(5 * time.Minute)}
	s.check("the kubectl steps: files and db-sync (expand, migrate), the Deployment Available, then db-contract completes", true, s.deploy)
	s.check("both stores listed through the Service, the default flagged", false, s.listStores)
	s.check("uploads land in each store's bucket and download byte-identical", false, s.uploads)
	s.check("the controller writes Ready, BackendsReady and DatabaseReady (from the completed Jobs) on the live objects", false, s.controllerReady)
	s.check("the autoscaler computes: ScalingActive=True", false, s.autoscaler)
	s.check("8 long downloads and 8 long uploads at once: probes pass, no restart", false, s.underLoad)
	s.check("a store's credentials Secret deleted: CredentialsReady=False names it", false, s.credentialsDeleted)
	// One rollout (pod starts are what a two-core node has least of)
	// carries three checks.
	var roll rollout
	s.check("default flip while a client loops: zero failed requests, old pods keep their ConfigMap", false, func(t *testing.T) { roll = s.flipUnderLoad(t) })
	s.check("SIGTERM: the transfer running on the old pod finishes, the pod stops within its grace period", false, func(t *testing.T) { s.stoppedGracefully(t, roll) })
	s.check("the new pods, without that store's Secret: that store answers 410, the other works", false, s.missingCredentials)
	if s.rel.name == rotationRelease {
		s.check("rotating credentials: a Secret's new content reaches glance at the next pod start", false, s.rotation)
	}
}

// Pod starts are what a two-core node has least of: five releases starting
// glance at once starve each other (a 256 KiB upload took a minute), so
// deployments run two at a time and rollouts one at a time; the rest of
// each release's checks run beside them.
var (
	deploySlots  = make(chan struct{}, 2)
	rolloutSlots = make(chan struct{}, 1)
)

func hold(slots chan struct{}) func() {
	slots <- struct{}{}
	return func() { <-slots }
}

// rotationRelease is where credential rotation is shown: the mechanism
// (the init container reads the Secrets at pod start) is the same on
// every release.
const rotationRelease = "2026.1"

// prepare writes examples/node for this release into s.dir (the later
// checks change and render it again), creates the namespace and applies
// the credentials Secrets, which are never part of the build (a GitOps
// repository holds them sealed, or an external secrets operator writes
// them).
func (s *scenario) prepare(t *testing.T) {
	s.dir = s.t.TempDir()
	r := s.rel
	testenv.CopyTree(t, filepath.Join(testenv.RepoRoot(), "examples", "node"), s.dir, func(_ string, b []byte) []byte {
		return []byte(strings.NewReplacer(
			"../../bin/glance-krm-fn", s.fnBin,
			`openStackRelease: "2025.2"`, `openStackRelease: "`+r.name+`"`,
			`tag: "2025.2"`, `tag: "`+r.name+`"`,
			"namespace: glance\n", "namespace: "+s.ns+"\n",
			"database: glance\n", "database: "+database(r)+"\n",
			"bucket: glance-images-2\n", "bucket: "+bucket(r, 2)+"\n",
			"bucket: glance-images\n", "bucket: "+bucket(r, 1)+"\n",
		).Replace(string(b)))
	})
	if s.keystone != nil {
		// Keystone's region (its bootstrap's), which authtoken's catalog
		// lookups then use whatever a packaged glance-api.conf says.
		s.edit(t, noKeystone, "")
		s.edit(t, "  keystoneEndpoint: "+keystoneURL+"\n", "  keystoneEndpoint: "+keystoneURL+"\n  region: RegionOne\n")
	}
	// The namespace enforces the restricted Pod Security profile: the
	// generated pods run under it.
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: s.ns, Labels: map[string]string{
		"pod-security.kubernetes.io/enforce": "restricted", "pod-security.kubernetes.io/warn": "restricted"}}}
	if _, err := s.n.Client.CoreV1().Namespaces().Create(context.Background(), ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.n.Kubectl(nil, "apply", "-n", s.ns, "-f", filepath.Join(s.dir, "credentials.yaml")); err != nil {
		t.Fatal(err)
	}
}

func (s *scenario) deploy(t *testing.T) {
	s.prepare(t)
	r := s.rel
	objects := build(t, s.kustomize, s.dir)
	defer hold(deploySlots)()
	start := time.Now()
	// docs/workload.md's kubectl steps, as a user runs them.
	s.apply(t, objects, labelComponent+" in (backends,config)")
	s.apply(t, objects, "app.kubernetes.io/component=db-sync")
	job := jobName(t, objects, "db-sync")
	s.waitJob(t, job, 5*time.Minute)
	s.apply(t, objects, "app.kubernetes.io/component notin (db-contract,store-drain)")
	if err := s.n.WaitAvailable(s.ns, "glance", 5*time.Minute); err != nil {
		t.Fatal(err)
	}
	s.contract(t, objects)
	if r.id != "" {
		return // the figures are the release's own Glance's
	}
	bench.record(r.name, func(b *releaseBench) {
		b.available = time.Since(start)
		j, err := s.n.Client.BatchV1().Jobs(s.ns).Get(context.Background(), job, metav1.GetOptions{})
		if err == nil && j.Status.StartTime != nil && j.Status.CompletionTime != nil {
			b.dbSync = j.Status.CompletionTime.Sub(j.Status.StartTime.Time)
		}
	})
}

// noKeystone is what examples/node configures for a node without Keystone.
const noKeystone = `  extraConfig:
    # Without Keystone (the node's per-release checks): Debian's paste
    # pipeline without auth, and the policies of a request without a
    # project. The store drain's Glance drops this block, tests/node.
    paste_deploy:
      config_file: /etc/glance/glance-api-paste.ini
      flavor: ""
    oslo_policy:
      enforce_new_defaults: "false"
`

// labelComponent is glance-krm's own component label: "backends" and
// "config" on the rendered Secret and ConfigMap.
const labelComponent = "glance.openstack.c5c3.io/component"

// apply applies the objects of the build the selector picks, as the
// kubectl steps of docs/workload.md do.
func (s *scenario) apply(t *testing.T, objects []byte, selector string) {
	t.Helper()
	if _, err := s.n.Kubectl(objects, "apply", "--server-side", "--force-conflicts", "-l", selector, "-f", "-"); err != nil {
		t.Fatal(err)
	}
}

// contract is the last kubectl step: once the rollout is done (the old
// pods gone), the db-contract Job, which must complete.
func (s *scenario) contract(t *testing.T, objects []byte) {
	t.Helper()
	s.apply(t, objects, "app.kubernetes.io/component in (db-contract,store-drain)")
	s.waitJob(t, jobName(t, objects, "db-contract"), 5*time.Minute)
}

// jobName is the name of the build's Job of a component (db-sync,
// db-contract): <glance>-<component>-<hash>.
func jobName(t *testing.T, objects []byte, component string) string {
	t.Helper()
	for _, doc := range strings.Split(string(objects), "\n---\n") {
		if strings.Contains(doc, "\nkind: Job\n") || strings.HasPrefix(doc, "apiVersion: batch/v1\nkind: Job\n") {
			for _, line := range strings.Split(doc, "\n") {
				if name, ok := strings.CutPrefix(line, "  name: "); ok && strings.HasPrefix(name, "glance-"+component+"-") {
					return name
				}
			}
		}
	}
	t.Fatalf("the build holds no %s Job", component)
	return ""
}

func (s *scenario) waitJob(t *testing.T, name string, limit time.Duration) {
	t.Helper()
	testenv.Eventually(t, limit, time.Second, "Job "+name, func() error {
		j, err := s.n.Client.BatchV1().Jobs(s.ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, c := range j.Status.Conditions {
			if c.Type == batchv1.JobComplete && c.Status == corev1.ConditionTrue {
				return nil
			}
			if c.Type == batchv1.JobFailed && c.Status == corev1.ConditionTrue {
				logs, _ := s.n.Kubectl(nil, "-n", s.ns, "logs", "job/"+name, "--all-containers", "--tail=30")
				t.Fatalf("Job %s failed: %s\n%s", name, c.Message, logs)
			}
		}
		return fmt.Errorf("not complete: %+v", j.Status)
	})
}

func (s *scenario) listStores(t *testing.T) {
	ctx, cancel := withTimeout(time.Minute)
	defer cancel()
	stores, err := s.glance.stores(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(stores) != 2 || !stores["primary"] || stores["secondary"] {
		t.Errorf("GET /v2/info/stores: %v, want primary (default) and secondary", stores)
	}
}

func (s *scenario) uploads(t *testing.T) {
	ctx, cancel := withTimeout(2 * time.Minute)
	defer cancel()
	data := randomBytes(t, 3<<20)
	for store, b := range map[string]string{"": bucket(s.rel, 1), "secondary": bucket(s.rel, 2)} {
		id, err := s.glance.roundTrip(ctx, "node-"+store, data, store)
		if err != nil {
			t.Fatal(err)
		}
		if !s.inBucket(t, b, id) {
			t.Errorf("image %s (store %q) is not in bucket %s", id, store, b)
		}
	}
}

func (s *scenario) inBucket(t *testing.T, bucket, id string) bool {
	t.Helper()
	ctx, cancel := withTimeout(30 * time.Second)
	defer cancel()
	for obj := range s.s3.ListObjects(ctx, bucket, minio.ListObjectsOptions{}) {
		if obj.Err != nil {
			t.Fatalf("listing %s: %v", bucket, obj.Err)
		}
		if obj.Key == id {
			return true
		}
	}
	return false
}

func randomBytes(t *testing.T, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}

// live reads a custom resource's conditions.
func (s *scenario) conditions(t *testing.T, resource, name string) map[string]metav1.Condition {
	t.Helper()
	gvr := schema.GroupVersionResource{Group: "glance.openstack.c5c3.io", Version: "v1alpha1", Resource: resource}
	u, err := s.resource(t, gvr, s.ns, name)
	if err != nil {
		t.Fatal(err)
	}
	list, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	out := map[string]metav1.Condition{}
	for _, c := range list {
		m, _ := c.(map[string]any)
		typ, _ := m["type"].(string)
		status, _ := m["status"].(string)
		reason, _ := m["reason"].(string)
		msg, _ := m["message"].(string)
		out[typ] = metav1.Condition{Type: typ, Status: metav1.ConditionStatus(status), Reason: reason, Message: msg}
	}
	return out
}

func (s *scenario) waitCondition(t *testing.T, resource, name, typ string, status metav1.ConditionStatus, contains string) {
	t.Helper()
	testenv.Eventually(t, 2*time.Minute, time.Second, fmt.Sprintf("%s %s %s=%s", resource, name, typ, status), func() error {
		c, ok := s.conditions(t, resource, name)[typ]
		if !ok || c.Status != status || !strings.Contains(c.Message, contains) {
			return fmt.Errorf("%s is %+v", typ, c)
		}
		return nil
	})
}

func (s *scenario) controllerReady(t *testing.T) {
	for _, b := range []string{"primary", "secondary"} {
		s.waitCondition(t, "glancebackends", b, "Ready", metav1.ConditionTrue, "")
	}
	s.waitCondition(t, "glances", "glance", "BackendsReady", metav1.ConditionTrue, "")
	// The db-sync and db-contract Jobs the kubelet ran say which release
	// the schema is at.
	s.waitCondition(t, "glances", "glance", "DatabaseReady", metav1.ConditionTrue, "the database schema is at "+s.rel.name+" (Job ")
}

func (s *scenario) autoscaler(t *testing.T) {
	testenv.Eventually(t, 3*time.Minute, 2*time.Second, "HorizontalPodAutoscaler glance ScalingActive", func() error {
		h, err := s.n.Client.AutoscalingV2().HorizontalPodAutoscalers(s.ns).Get(context.Background(), "glance", metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, c := range h.Status.Conditions {
			if c.Type == autoscalingv2.ScalingActive {
				if c.Status == corev1.ConditionTrue {
					return nil
				}
				return fmt.Errorf("ScalingActive=%s: %s: %s", c.Status, c.Reason, c.Message)
			}
		}
		return fmt.Errorf("no ScalingActive condition yet: %+v", h.Status.Conditions)
	})
}

// apiPods are the Deployment's pods, by name.
func (s *scenario) apiPods(t *testing.T) []corev1.Pod {
	t.Helper()
	pods, err := s.n.Client.CoreV1().Pods(s.ns).List(context.Background(), metav1.ListOptions{
		LabelSelector: "app.kubernetes.io/instance=glance,app.kubernetes.io/component=api"})
	if err != nil {
		t.Fatal(err)
	}
	return pods.Items
}

func ready(p corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func restarts(p corev1.Pod) int32 {
	var n int32
	for _, c := range p.Status.ContainerStatuses {
		n += c.RestartCount
	}
	return n
}

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
			c := &glanceClient{url: s.glance.url, http: s.n.HTTPClient(0)}
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
			c := &glanceClient{url: s.glance.url, http: s.n.HTTPClient(0)}
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
		c := &glanceClient{url: "http://" + ip + ":9292", http: s.n.HTTPClient(0)}
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

// restart rolls the Deployment (kubectl rollout restart) and waits.
func (s *scenario) restart(t *testing.T) {
	t.Helper()
	defer hold(rolloutSlots)()
	old := s.apiPods(t)
	d, err := s.n.Client.AppsV1().Deployments(s.ns).Get(context.Background(), "glance", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.n.Kubectl(nil, "-n", s.ns, "rollout", "restart", "deployment/glance"); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 5*time.Minute, time.Second, "the restart", func() error { return s.rolledOut(d.Generation, old) })
}

// setSecret replaces one key of a Secret.
func (s *scenario) setSecret(t *testing.T, name, key, value string) {
	t.Helper()
	sec, err := s.n.Client.CoreV1().Secrets(s.ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if sec.Data == nil {
		sec.Data = map[string][]byte{}
	}
	sec.Data[key] = []byte(value)
	if _, err := s.n.Client.CoreV1().Secrets(s.ns).Update(context.Background(), sec, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// rotation shows, for each credential, what a new content of its Secret
// does: nothing to the running pods (the init container wrote the
// credentials file at their start), everything to the next pod. So a
// rotation is: the new value valid on both sides, the Secret changed, a
// rollout (kubectl rollout restart), and only then the old value revoked
// (docs/credentials.md).
func (s *scenario) rotation(t *testing.T) {
	ctx, cancel := withTimeout(10 * time.Minute)
	defer cancel()
	data := randomBytes(t, 256<<10)
	// The S3 keys of the default store (secondary after the flip): a
	// wrong secret key in the Secret. The service user's password: a new
	// one (this Glance runs without Keystone: what glance reads is compared).
	const newPassword = ` new$pa%ss "q" `
	s.setSecret(t, "secondary-s3-credentials", "secret-access-key", "not-the-key")
	s.setSecret(t, "glance-service-user", "password", newPassword)
	if _, err := s.glance.roundTrip(ctx, "rotation-running", data, "secondary"); err != nil {
		t.Errorf("the running pod, after the S3 Secret changed: %v", err)
	}
	if got := s.servicePassword(t); got != sha256.Sum256([]byte(servicePassword)) {
		t.Error("the running pod's glance reads another service password than the one it started with")
	}
	s.restart(t)
	if _, err := s.glance.roundTrip(ctx, "rotation-restarted", data, "secondary"); err == nil {
		t.Error("after a restart the store with a wrong key in its Secret still took an upload")
	}
	if got := s.servicePassword(t); got != sha256.Sum256([]byte(newPassword)) {
		t.Error("after a restart glance does not read the Secret's new service password")
	}
	// The database password: wrong in the Secret.
	s.setSecret(t, "secondary-s3-credentials", "secret-access-key", s3Secret)
	s.setSecret(t, "glance-service-user", "password", servicePassword)
	s.setSecret(t, "glance-db", "password", "not-the-password")
	if _, err := s.glance.create(ctx, "rotation-db-running"); err != nil {
		t.Errorf("the running pod, after the database Secret changed: %v", err)
	}
	s.restart(t)
	short, stop := withTimeout(30 * time.Second)
	if _, err := s.glance.create(short, "rotation-db-restarted"); err == nil {
		t.Error("after a restart with a wrong database password glance still created an image")
	}
	stop()
	s.setSecret(t, "glance-db", "password", dbPassword)
	s.restart(t)
	if _, err := s.glance.roundTrip(ctx, "rotation-restored", data, "secondary"); err != nil {
		t.Errorf("after the Secrets were restored and the pods restarted: %v", err)
	}
}

// servicePassword is the SHA-256 of the [keystone_authtoken] password the
// running pod's glance reads (oslo.config on its config directories), so
// the value never leaves the pod.
func (s *scenario) servicePassword(t *testing.T) [32]byte {
	t.Helper()
	const script = `import hashlib, sys
from oslo_config import cfg
conf = cfg.ConfigOpts()
conf.register_opt(cfg.StrOpt("password", secret=True), group="keystone_authtoken")
conf([], project="glance", prog="glance-api", default_config_files=[])
sys.stdout.write(hashlib.sha256(conf.keystone_authtoken.password.encode()).hexdigest())`
	pods := s.apiPods(t)
	if len(pods) == 0 {
		t.Fatal("no API pod")
	}
	out, err := s.n.Kubectl(nil, "-n", s.ns, "exec", pods[0].Name, "-c", "glance-api", "--", "python3", "-c", script)
	if err != nil {
		t.Fatal(err)
	}
	var sum [32]byte
	if b, err := hex.DecodeString(strings.TrimSpace(string(out))); err != nil || len(b) != len(sum) {
		t.Fatalf("%q: %v", out, err)
	} else {
		copy(sum[:], b)
	}
	return sum
}

// servicePassword is the service user's password of credentials.yaml.
const servicePassword = ` pa$word ${x} %(y)s #1; "q" `

// credentialsDeleted deletes the primary store's Secret (after the flip
// the default is secondary): the controller notices at once; the running
// pods keep the credentials they started with.
func (s *scenario) credentialsDeleted(t *testing.T) {
	if err := s.n.Client.CoreV1().Secrets(s.ns).Delete(context.Background(), "primary-s3-credentials", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	s.waitCondition(t, "glancebackends", "primary", "CredentialsReady", metav1.ConditionFalse, "primary-s3-credentials")
}

// missingCredentials: the pods the flip started had no primary Secret to
// read: that store is disabled (410 Gone), the other works.
func (s *scenario) missingCredentials(t *testing.T) {
	ctx, cancel := withTimeout(2 * time.Minute)
	defer cancel()
	id, err := s.glance.create(ctx, "missing-credentials")
	if err != nil {
		t.Fatal(err)
	}
	var se *statusError
	if err := s.glance.upload(ctx, id, randomBytes(t, 64<<10), "primary"); !errors.As(err, &se) || se.status != http.StatusGone {
		t.Errorf("an upload to the store without credentials: %v, want 410 Gone", err)
	}
	if _, err := s.glance.roundTrip(ctx, "missing-credentials-other", randomBytes(t, 64<<10), "secondary"); err != nil {
		t.Errorf("the other store: %v", err)
	}
}
