//go:build scale

// Package scale_test is `make bench-controller`: the runtime controller
// at scale, on a real kube-apiserver and etcd (envtest) on this machine,
// as a process under its generated RBAC with --leader-elect. 100 Glances
// with 10 GlanceBackends each, whose Deployments and rendered Secrets the
// function generated, 50 of the backends waiting for their credentials.
// It measures what issue 14 asks (API requests by verb and resource from
// the API server's audit log, reconciles from the controller's metrics,
// Events, RSS and CPU from /proc, Secret → CredentialsReady latency) and
// writes them, with the goals and verdicts, into BENCHMARKS.md.
package scale_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/kustomize/kyaml/kio"

	"github.com/c5c3/glance-krm/controller/manager"
	"github.com/c5c3/glance-krm/internal/testenv"
	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

const (
	namespaces       = 10
	glancesPerNS     = 10
	backendsPerGl    = 10
	waitingBackends  = 50 // without credentials until the latency phase
	unrelated        = 10_000
	backstopPeriod   = 90 * time.Second
	controllerUser   = "glance-krm-controller"
	steadyWindow     = 30 * time.Second
	convergenceLimit = 5 * time.Minute
)

var (
	admin    client.Client
	env      *envtest.Environment
	auditLog string
)

func TestControllerAtScale(t *testing.T) {
	root := testenv.RepoRoot()
	dir := t.TempDir()
	auditLog = filepath.Join(dir, "audit.log")
	policy := filepath.Join(dir, "audit-policy.yaml")
	write(t, policy, `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived, ResponseStarted]
rules:
- level: Metadata
  users: [`+controllerUser+`]
- level: None
`)
	var cfg *rest.Config
	var err error
	env, cfg, err = testenv.StartAPIServerWith(func(env *envtest.Environment) {
		env.ControlPlane.GetAPIServer().Configure().Set("audit-policy-file", policy).Set("audit-log-path", auditLog).
			Set("audit-log-format", "json").Set("audit-log-mode", "blocking")
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = env.Stop() }()
	cfg.QPS, cfg.Burst = 1000, 2000
	if admin, err = client.New(cfg, client.Options{Scheme: manager.Scheme()}); err != nil {
		t.Fatal(err)
	}
	r := &report{}

	// The scenario, before the controller starts.
	start := time.Now()
	waiting := populate(t, root)
	t.Logf("scenario created in %v", time.Since(start).Round(time.Second))

	ctl := startController(t)
	defer ctl.Stop()

	// 1. Initial convergence: every backend judged.
	t0 := time.Now()
	// Listing 1,000 backends costs the API server, so this polls every 2
	// s; the time is the audit log's, of the last backend status write.
	testenv.Eventually(t, convergenceLimit, 2*time.Second, "every backend judged", func() error {
		n, err := judged()
		if err == nil && n < namespaces*glancesPerNS*backendsPerGl {
			err = fmt.Errorf("%d judged", n)
		}
		return err
	})
	r.convergence = lastRequest(t, "patch", "glancebackends/status").Sub(t0)
	time.Sleep(3 * time.Second) // the Glances' aggregation after the last backend
	r.convergenceReconciles = ctl.reconciles(t)
	r.convergenceRequests = requestsSince(t, time.Time{})
	r.convergenceCPU = ctl.cpu(t)
	r.rssConverged = ctl.rss(t)

	// 2. Secret → CredentialsReady, one new Secret at a time.
	phase := time.Now()
	before := ctl.reconciles(t)
	for _, b := range waiting {
		created := time.Now()
		mustCreate(t, credentials(b.Namespace, b.Spec.S3.CredentialsSecretRef.Name))
		eventually(t, time.Minute, "CredentialsReady of "+b.Name, func() error {
			var got v1alpha1.GlanceBackend
			if err := admin.Get(context.Background(), client.ObjectKeyFromObject(&b), &got); err != nil {
				return err
			}
			if !meta.IsStatusConditionTrue(got.Status.Conditions, v1alpha1.ConditionCredentialsReady) {
				return fmt.Errorf("not yet")
			}
			return nil
		})
		r.latencies = append(r.latencies, time.Since(created))
		time.Sleep(200 * time.Millisecond)
	}
	time.Sleep(3 * time.Second)
	r.perSecret = requestsSince(t, phase)
	r.perSecretReconciles = ctl.reconciles(t).minus(before)

	// 3. Steady state, right after a backstop round.
	r.events = events(t)
	time.Sleep(backstopPeriod - time.Since(t0)%backstopPeriod + 15*time.Second)
	steady := time.Now()
	time.Sleep(steadyWindow)
	r.steady = requestsSince(t, steady)

	// 4. The backstop: one round.
	round := time.Now()
	beforeRound := ctl.reconciles(t)
	time.Sleep(backstopPeriod)
	r.backstop = requestsSince(t, round)
	r.backstopReconciles = ctl.reconciles(t).minus(beforeRound)

	// 5. 10,000 unrelated Deployments and 10,000 unrelated Secrets.
	unrelatedObjects(t)
	time.Sleep(30 * time.Second)
	r.rssLoaded = ctl.rss(t)
	r.eventsEnd = events(t)
	r.errorLines = ctl.errorLines(t)
	r.write(t, root)
}

// populate creates the namespaces, Glances, backends, credentials (all
// but the waiting backends') and what the function renders for them, and
// returns the waiting backends.
func populate(t *testing.T, root string) []v1alpha1.GlanceBackend {
	t.Helper()
	var items strings.Builder
	var waiting []v1alpha1.GlanceBackend
	for n := range namespaces {
		ns := fmt.Sprintf("scale-%02d", n)
		mustCreate(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
		for g := range glancesPerNS {
			name := fmt.Sprintf("glance-%02d", g)
			fmt.Fprintf(&items, `- apiVersion: glance.openstack.c5c3.io/v1alpha1
  kind: Glance
  metadata: {name: %s, namespace: %s}
  spec:
    openStackRelease: "2025.2"
    image: {repository: ghcr.io/c5c3/glance, tag: "2025.2"}
    database: {host: mariadb, database: glance, secretRef: {name: glance-db}}
    keystoneEndpoint: http://keystone:5000/v3
    serviceUser: {secretRef: {name: glance-service-user}}
    cache: {servers: ["memcached:11211"]}
`, name, ns)
			for b := range backendsPerGl {
				bn := fmt.Sprintf("%s-store-%02d", name, b)
				fmt.Fprintf(&items, `- apiVersion: glance.openstack.c5c3.io/v1alpha1
  kind: GlanceBackend
  metadata: {name: %s, namespace: %s}
  spec: {glanceRef: {name: %s}, type: S3, isDefault: %t, s3: {host: "https://s3.example", bucket: %s, credentialsSecretRef: {name: %s-credentials}}}
`, bn, ns, name, b == 0, bn, bn)
			}
		}
	}
	rl := "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n" + items.String()
	cmd := exec.Command(os.Getenv("GLANCE_KRM_FN"))
	cmd.Stdin = strings.NewReader(rl)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("the function: %v\n%s", err, stderr.String())
	}
	nodes, err := (&kio.ByteReader{Reader: &out, OmitReaderAnnotations: true}).Read()
	if err != nil {
		t.Fatal(err)
	}
	var objs []client.Object
	for _, n := range nodes {
		switch n.GetKind() {
		case "Glance", "GlanceBackend", "Deployment", "Secret", "ConfigMap":
		default:
			continue
		}
		m, err := n.Map()
		if err != nil {
			t.Fatal(err)
		}
		u := &unstructured.Unstructured{Object: m}
		objs = append(objs, u)
		if u.GetKind() != "GlanceBackend" {
			continue
		}
		var b v1alpha1.GlanceBackend
		if err := runtimeConvert(m, &b); err != nil {
			t.Fatal(err)
		}
		if len(waiting) < waitingBackends && strings.HasSuffix(b.Name, "-store-09") {
			waiting = append(waiting, b)
			continue
		}
		objs = append(objs, credentials(b.Namespace, b.Spec.S3.CredentialsSecretRef.Name))
	}
	parallelCreate(t, objs)
	return waiting
}

func runtimeConvert(m map[string]any, into any) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, into)
}

func credentials(ns, name string) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Data: map[string][]byte{
		v1alpha1.CredentialsAccessKeyID: []byte("AKIAEXAMPLE"), v1alpha1.CredentialsSecretAccessKey: []byte("secret-example"),
	}}
}

// unrelatedObjects creates what a busy cluster holds besides Glance:
// Deployments and Secrets (10 KiB each) nothing of ours refers to.
func unrelatedObjects(t *testing.T) {
	t.Helper()
	mustCreate(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "busy"}})
	var objs []client.Object
	one := int32(1)
	for i := range unrelated {
		labels := map[string]string{"app": fmt.Sprintf("app-%d", i)}
		objs = append(objs, &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("app-%05d", i), Namespace: "busy", Labels: labels},
			Spec: appsv1.DeploymentSpec{Replicas: &one, Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{
					Containers: []corev1.Container{{Name: "app", Image: "registry.example/app:1", Env: []corev1.EnvVar{{Name: "PAD", Value: strings.Repeat("x", 2048)}}}}}}},
		}, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("secret-%05d", i), Namespace: "busy"},
			Data: map[string][]byte{"blob": bytes.Repeat([]byte("s"), 10<<10)}})
	}
	parallelCreate(t, objs)
}

func parallelCreate(t *testing.T, objs []client.Object) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, len(objs))
	work := make(chan client.Object)
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for o := range work {
				if err := admin.Create(context.Background(), o); err != nil {
					errs <- fmt.Errorf("%s %s: %w", o.GetObjectKind().GroupVersionKind().Kind, o.GetName(), err)
				}
			}
		}()
	}
	for _, o := range objs {
		work <- o
	}
	close(work)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

func mustCreate(t *testing.T, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		if err := admin.Create(context.Background(), o); err != nil {
			t.Fatalf("creating %s: %v", o.GetName(), err)
		}
	}
}

// judged counts backends with conditions for their current generation.
func judged() (int, error) {
	var list v1alpha1.GlanceBackendList
	if err := admin.List(context.Background(), &list); err != nil {
		return 0, err
	}
	n := 0
	for _, b := range list.Items {
		if c := meta.FindStatusCondition(b.Status.Conditions, v1alpha1.ConditionReady); c != nil && c.ObservedGeneration == b.Generation {
			n++
		}
	}
	return n, nil
}

func events(t *testing.T) eventCount {
	t.Helper()
	var list eventsv1.EventList
	if err := admin.List(context.Background(), &list); err != nil {
		t.Fatal(err)
	}
	var c eventCount
	pairs := map[string]bool{}
	for _, e := range list.Items {
		if e.Reason != v1alpha1.EventReasonGlanceBackendSkipped {
			continue
		}
		c.objects++
		c.total++
		if e.Series != nil {
			c.total += int(e.Series.Count) - 1
		}
		pairs[e.Regarding.Namespace+"/"+e.Regarding.Name+"|"+e.Note] = true
	}
	c.distinct = len(pairs)
	return c
}

type eventCount struct{ objects, total, distinct int }

func eventually(t *testing.T, limit time.Duration, what string, check func() error) {
	t.Helper()
	testenv.Eventually(t, limit, 20*time.Millisecond, what, check)
}

// requests counts the controller's API requests by verb and resource.
type requests map[string]int

func (r requests) total() int {
	n := 0
	for _, v := range r {
		n += v
	}
	return n
}

func (r requests) summary() string {
	keys := make([]string, 0, len(r))
	for k := range r {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return r[keys[i]] > r[keys[j]] || r[keys[i]] == r[keys[j]] && keys[i] < keys[j] })
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d", k, r[k]))
	}
	return strings.Join(parts, ", ")
}

// lastRequest is when the controller's last request of a verb and
// resource was received.
func lastRequest(t *testing.T, verb, resource string) time.Time {
	t.Helper()
	var last time.Time
	scanAudit(t, func(v, res string, at time.Time) {
		if v == verb && res == resource && at.After(last) {
			last = at
		}
	})
	return last
}

// requestsSince reads the audit log: the controller's completed requests
// received at or after since.
func requestsSince(t *testing.T, since time.Time) requests {
	t.Helper()
	out := requests{}
	scanAudit(t, func(verb, res string, at time.Time) {
		if !at.Before(since) {
			out[verb+" "+res]++
		}
	})
	return out
}

// scanAudit calls each with every completed request of the controller.
func scanAudit(t *testing.T, each func(verb, resource string, received time.Time)) {
	t.Helper()
	f, err := os.Open(auditLog)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var e struct {
			Verb                     string
			User                     struct{ Username string }
			ObjectRef                *struct{ Resource, Subresource string }
			RequestReceivedTimestamp time.Time
		}
		if json.Unmarshal(sc.Bytes(), &e) != nil || e.User.Username != controllerUser {
			continue
		}
		res := "-"
		if e.ObjectRef != nil {
			res = e.ObjectRef.Resource
			if e.ObjectRef.Subresource != "" {
				res += "/" + e.ObjectRef.Subresource
			}
		}
		each(e.Verb, res, e.RequestReceivedTimestamp)
	}
}

// controllerProcess is the controller under measurement.
type controllerProcess struct{ *testenv.Controller }

func startController(t *testing.T) *controllerProcess {
	t.Helper()
	return &controllerProcess{testenv.StartController(t, env, admin, testenv.ControllerOptions{
		User: controllerUser, Metrics: true, Args: []string{"--backstop-period", backstopPeriod.String()},
	})}
}

// counts are reconciles per controller.
type counts map[string]float64

func (c counts) minus(o counts) counts {
	out := counts{}
	for k, v := range c {
		out[k] = v - o[k]
	}
	return out
}

// reconciles scrapes controller_runtime_reconcile_total.
func (p *controllerProcess) reconciles(t *testing.T) counts {
	t.Helper()
	resp, err := http.Get("http://" + p.Metrics + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out := counts{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "controller_runtime_reconcile_total{") {
			continue
		}
		name := between(line, `controller="`, `"`)
		v, _ := strconv.ParseFloat(line[strings.LastIndex(line, " ")+1:], 64)
		out[name] += v
	}
	return out
}

func between(s, from, to string) string {
	_, rest, _ := strings.Cut(s, from)
	v, _, _ := strings.Cut(rest, to)
	return v
}

// rss is the process's resident set, in MiB.
func (p *controllerProcess) rss(t *testing.T) float64 {
	t.Helper()
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.Pid()))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	return 0
}

// cpu is the process's CPU time so far (user + system), in seconds.
func (p *controllerProcess) cpu(t *testing.T) float64 {
	t.Helper()
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.Pid()))
	if err != nil {
		t.Fatal(err)
	}
	s := string(raw)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	ut, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	return (ut + st) / 100 // USER_HZ
}

// errorLines are the controller log's error-level lines.
func (p *controllerProcess) errorLines(t *testing.T) []string {
	t.Helper()
	raw, err := os.ReadFile(p.Log)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, line := range strings.Split(string(raw), "\n") {
		if strings.Contains(line, "\tERROR\t") || strings.Contains(line, `"level":"error"`) {
			out = append(out, line)
		}
	}
	return out
}

func write(t *testing.T, path, content string) string {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
