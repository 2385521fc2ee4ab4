//go:build e2e

package node_test

import (
	"cmp"
	"context"
	"crypto/rand"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/c5c3/glance-krm/internal/testenv"
	"github.com/c5c3/glance-krm/internal/testenv/node"
	"github.com/c5c3/glance-krm/krm/v1alpha1"
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
	keystone  *testenv.Keystone // when the Glance runs behind Keystone
	engine    string            // the GitOps engine that syncs it, if one does
	dyn       dynamic.Interface
}

// check runs one named assertion as a subtest and counts it; a failed
// check ends the release's run when stop is true (later ones need it).
func (s *scenario) check(name string, stop bool, f func(t *testing.T)) {
	label := s.rel.name + " (" + s.rel.suite + ")"
	if s.engine != "" {
		label = s.engine + ", " + label
	}
	ok := tally.Check(s.t, label, name, f)
	if !ok {
		s.t.Logf("after %q failed, the API pods' logs:\n%s", name, s.logs())
		tally.Why(label, name+", the cluster then", s.state())
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

// state is what the cluster showed when a check failed, short enough for
// the tally's summary: the namespace's workload, and the engine's view.
func (s *scenario) state() string {
	out, _ := s.n.Kubectl(nil, "-n", s.ns, "get", "deployments,pods,jobs", "--no-headers")
	state := string(out) + s.autoscalerState() + "\n"
	switch s.engine {
	case "Argo CD":
		out, _ = s.n.Kubectl(nil, "-n", "argocd", "get", "applications.argoproj.io", "glance", "-o", "jsonpath="+
			`sync {.status.sync.status} at {.status.sync.revision}, health {.status.health.status} ({.status.health.message}), `+
			`operation {.status.operationState.phase}: {.status.operationState.message}{"\n"}`+
			`{range .status.operationState.syncResult.resources[*]}{.kind}/{.name} {.status} {.hookPhase}: {.message}{"\n"}{end}`)
		state += string(out)
	case "Flux":
		out, _ = s.n.Kubectl(nil, "-n", "flux-system", "get", "kustomizations.kustomize.toolkit.fluxcd.io,buckets.source.toolkit.fluxcd.io", "--no-headers")
		state += string(out)
	}
	return state
}

func (s *scenario) run() {
	s.ns = namespace(s.rel)
	s.glance = &glanceClient{url: "http://glance." + s.ns + ".svc:9292", http: s.n.HTTPClient(5 * time.Minute)}
	s.check("the kubectl steps: files and db-sync (expand, migrate), the Deployment Available, then db-contract completes", true, s.deploy)
	s.check("both stores listed through the Service, the default flagged", false, s.listStores)
	s.check("uploads land in each store's bucket and download byte-identical", false, s.uploads)
	s.check("the controller writes Ready, BackendsReady and DatabaseReady (from the completed Jobs) on the live objects", false, s.controllerReady)
	if s.seedDefaults() {
		s.check("the VPA recommender recommends glance-api's requests within the Glance's bounds", false, s.vpaRecommends)
	} else {
		s.check("the autoscaler computes: ScalingActive=True", false, s.autoscaler)
	}
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
	// and the load checks one at a time: a Glance is sure of its 100m
	// CPU request only, and sixteen transfers beside another Glance's
	// sixteen measure the node, not the Glance (a CI run had one fail
	// while others ran).
	loadSlots = make(chan struct{}, 1)
)

func hold(slots chan struct{}) func() {
	slots <- struct{}{}
	return func() { <-slots }
}

// rotationRelease is where credential rotation is shown: the mechanism
// (the init container reads the Secrets at pod start) is the same on
// every release.
const rotationRelease = "2026.2"

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
			"credentialsImage: ghcr.io/c5c3/glance-krm-fn:dev", "credentialsImage: "+ours.fn,
			`openStackRelease: "2025.2"`, `openStackRelease: "`+r.name+`"`,
			`tag: "2025.2"`, `tag: "`+r.name+`"`,
			"namespace: glance\n", "namespace: "+s.ns+"\n",
			"database: glance\n", "database: "+database(r)+"\n",
			"bucket: glance-images-2\n", "bucket: "+bucket(r, 2)+"\n",
			"bucket: glance-images\n", "bucket: "+bucket(r, 1)+"\n",
		).Replace(string(b)))
	})
	if s.seedDefaults() {
		// The seed's defaults, and its VPA in place of the HPA (the two
		// are refused together).
		s.edit(t, nodeResources, "")
		s.edit(t, nodeAutoscaling, "")
		s.edit(t, "  deployment:\n", "  deployment:\n"+nodeVPA)
	}
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
	pulledByDigest(t, s.n, s.ns, "app.kubernetes.io/instance=glance,app.kubernetes.io/component=api", v1alpha1.CredentialsContainer, ours.fn)
	if s.seedDefaults() {
		s.seedDefaultsRun(t)
	}
	s.contract(t, objects)
	// A new database: db-sync made it whole (db sync), so db-contract,
	// which runs while the pods serve, has nothing left to drop.
	contract := jobName(t, objects, "db-contract")
	if out, err := s.n.Kubectl(nil, "-n", s.ns, "logs", "job/"+contract, "-c", "db-contract"); err != nil ||
		!strings.Contains(string(out), "Database is up to date") {
		t.Errorf("day 1's %s, want \"Database is up to date\" (db-sync made the new database whole): %v\n%s", contract, err, out)
	}
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

// defaultsRelease is the release whose Glance runs with the seed's newer
// resource defaults instead of examples/node's small figures: uWSGI's 2 ×
// 16 threads, the largest default memory glance-krm generates.
const defaultsRelease = "2026.2"

// seedDefaults tells whether this is the kubectl door's Glance that runs
// the seed's defaults and VPA.
func (s *scenario) seedDefaults() bool { return s.rel.name == defaultsRelease && s.rel.id == "" }

// nodeResources and nodeAutoscaling are examples/node's blocks;
// nodeVPA the seed's verticalAutoscaling, recommending only.
const (
	nodeResources   = "    resources:\n      requests: {cpu: 100m, memory: 256Mi}\n      limits: {memory: 1Gi}\n"
	nodeAutoscaling = "  autoscaling:\n    minReplicas: 1\n    maxReplicas: 1\n    targetCPUUtilization: 80\n"
	nodeVPA         = "    verticalAutoscaling:\n      updateMode: \"Off\"\n      minAllowed: {cpu: 50m, memory: 256Mi}\n      maxAllowed: {cpu: \"2\", memory: 4Gi}\n"
)

// vpaRecommends waits until the VerticalPodAutoscaler recommender, from
// metrics-server's samples of the running pod, writes a recommendation
// for both containers' kinds the seed's VPA names ("*"): glance-api's
// CPU and memory, within minAllowed and maxAllowed.
func (s *scenario) vpaRecommends(t *testing.T) {
	vpa := schema.GroupVersionResource{Group: "autoscaling.k8s.io", Version: "v1", Resource: "verticalpodautoscalers"}
	testenv.Eventually(t, 6*time.Minute, 5*time.Second, "VerticalPodAutoscaler glance recommends for glance-api", func() error {
		u, err := dynamic.NewForConfigOrDie(s.n.Config).Resource(vpa).Namespace(s.ns).Get(context.Background(), "glance", metav1.GetOptions{})
		if err != nil {
			return err
		}
		recs, _, _ := unstructured.NestedSlice(u.Object, "status", "recommendation", "containerRecommendations")
		for _, r := range recs {
			m, _ := r.(map[string]any)
			if m["containerName"] != v1alpha1.GlanceAPIContainer {
				continue
			}
			target, _, _ := unstructured.NestedStringMap(m, "target")
			cpu, mem := resource.MustParse(cmp.Or(target["cpu"], "0")), resource.MustParse(cmp.Or(target["memory"], "0"))
			if cpu.Cmp(resource.MustParse("50m")) < 0 || cpu.Cmp(resource.MustParse("2")) > 0 ||
				mem.Cmp(resource.MustParse("256Mi")) < 0 || mem.Cmp(resource.MustParse("4Gi")) > 0 {
				return fmt.Errorf("glance-api's target %v is outside minAllowed and maxAllowed", target)
			}
			t.Logf("the recommender's target for glance-api: cpu %s, memory %s (requests as generated: 70m, 3024Mi)", target["cpu"], target["memory"])
			return nil
		}
		conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
		return fmt.Errorf("no recommendation for glance-api yet; conditions %v", conds)
	})
}

// seedDefaultsRun checks that the running API pod and the db-sync pod
// carry the seed's defaults (krm/v1alpha1/resources.go): the API
// scheduled, started and became Available with them, and db-sync
// completed inside 368Mi.
func (s *scenario) seedDefaultsRun(t *testing.T) {
	t.Helper()
	want := map[string]string{
		"pods/app.kubernetes.io/instance=glance,app.kubernetes.io/component=api": "70m 3024Mi  3024Mi",
		"pods/app.kubernetes.io/component=db-sync":                               "70m 368Mi  368Mi",
	}
	for sel, w := range want {
		out, err := s.n.Kubectl(nil, "-n", s.ns, "get", "pods", "-l", strings.TrimPrefix(sel, "pods/"), "-o",
			`jsonpath={range .items[*].spec.containers[0]}{.resources.requests.cpu} {.resources.requests.memory} {.resources.limits.cpu} {.resources.limits.memory}{"\n"}{end}`)
		if err != nil {
			t.Fatal(err)
		}
		if strings.TrimSpace(string(out)) == "" {
			t.Errorf("%s: no pod", sel)
		}
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			if line != w {
				t.Errorf("%s: resources %q (CPU request, memory request, CPU limit, memory limit), want the seed's defaults %q", sel, line, w)
			}
		}
	}
	t.Logf("%s: the API pod Available and db-sync Complete with the seed's default resources (2 × 16 threads: 3024Mi)", s.rel.name)
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

// autoscalerState is the HorizontalPodAutoscaler's conditions, in one
// line, for a log that has to say why it was Degraded.
func (s *scenario) autoscalerState() string {
	out, _ := s.n.Kubectl(nil, "-n", s.ns, "get", "horizontalpodautoscalers.autoscaling", "glance", "-o", "jsonpath="+
		`HorizontalPodAutoscaler glance: {range .status.conditions[*]}{.type}={.status} {.reason}: {.message}; {end}`)
	return string(out)
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
