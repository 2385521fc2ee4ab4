//go:build e2e

package node_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/c5c3/glance-krm/internal/testenv"
)

// drainRelease is the release whose generated store drain runs on the
// node, in a Glance of its own (namespace glance-drain) behind Keystone:
// the Job is the same on every release, and the chroot matrix runs its
// script on each (tests/e2e/glance/drain_test.go).
const drainRelease = "2026.1"

// drainVariant is drainRelease's Glance for the drain.
func drainVariant(r release) release {
	r.id = "drain"
	r.suite += ", the store drain behind Keystone"
	return r
}

// recordName is the drain's record, which the render holds.
const recordName = "glance-store-drain-secondary"

// drainImages is how many images each of two projects puts into
// secondary (and one each into primary): enough that the drain is still
// running when the test deletes its pod after the first.
const drainImages = 4

// drainRun is what the drain's steps hand each other: the images
// uploaded, the renders around the drain commit, the Job's pods' logs and
// the record read back.
type drainRun struct {
	s                *scenario
	images           map[string][32]byte // id → the sum of its bytes
	secondary        []string            // the private images of secondary, by project
	deactivated      string
	before, draining string // the renders around the drain commit
	job              string
	logs             map[string]string // pod → its log
	first            string            // the pod the test deleted
	record           string            // the record ConfigMap, as read back
}

// runDrain is the two commits of docs/day2.md on the node: the drain
// annotation (the generated Job runs on the kubelet as the service user,
// through Keystone; its pod deleted after its first image, the next pod
// resumes), then the store's removal, which explain passes with the live
// record; every image then downloads byte-identical from primary alone.
func (s *scenario) runDrain() {
	d := &drainRun{s: s, images: map[string][32]byte{}}
	s.ns = namespace(s.rel)
	admin := s.keystone.Token(s.t, "admin", keystoneAdminPassword, "admin")
	s.glance = &glanceClient{url: "http://glance." + s.ns + ".svc:9292", http: s.n.HTTPClient(5 * time.Minute), token: admin}
	s.check("behind Keystone: the kubectl steps, then /v2/images answers 200 with a token, 401 without one", true, d.deploysBehindKeystone)
	s.check(fmt.Sprintf("images of every kind, uploaded with their users' tokens: %d private of two projects in secondary and 2 in primary, hidden, community, public, shared (pending, accepted, rejected), deactivated, in both stores", 2*drainImages), true, d.uploadsEveryKind)
	s.check("the drain commit: explain lists the drain; its Job, its pod deleted after the first image, resumes in the next pod and completes", true, d.drainCommit)
	s.check("the drain's logs: the deleted pod moved one or more, a later pod failed naming the deactivated image, the last pod resumed with what was left and ends Complete, no credential", false, d.drainLogs)
	s.check("the record ConfigMap says Complete, every image moved; the controller's StoresDrained=True", false, d.recordComplete)
	s.check("the removal commit: explain blocks it without the record, passes it with the live one; applied, every image downloads byte-identical from primary alone", false, d.removalCommit)
}

// deploysBehindKeystone deploys the Glance behind Keystone with the kubectl steps.
func (d *drainRun) deploysBehindKeystone(t *testing.T) {
	s := d.s
	s.deploy(t)
	s.authenticates(t)
}

// uploadsEveryKind uploads images of every kind with their users' tokens.
func (d *drainRun) uploadsEveryKind(t *testing.T) {
	s := d.s
	ctx, cancel := withTimeout(8 * time.Minute)
	defer cancel()
	clients := map[string]*glanceClient{"admin": s.glance}
	for _, user := range []string{"drain-a", "drain-b"} {
		g := *s.glance
		g.token = s.keystone.User(t, user)
		clients[user] = &g
	}
	n := 0
	add := func(user, store string, fields map[string]any) string {
		n++
		data := randomBytes(t, 200_000+1_000*n)
		id, err := clients[user].roundTripWith(ctx, user, data, store, fields)
		if err != nil {
			t.Fatal(err)
		}
		d.images[id] = sha256.Sum256(data)
		if store == "secondary" {
			d.secondary = append(d.secondary, id)
		}
		return id
	}
	for _, user := range []string{"drain-a", "drain-b"} {
		for j := range drainImages + 1 {
			store := "secondary"
			if j == drainImages {
				store = "primary"
			}
			add(user, store, nil)
		}
	}
	add("drain-a", "secondary", map[string]any{"os_hidden": true})
	add("drain-b", "secondary", map[string]any{"os_hidden": true, "visibility": "community"})
	add("drain-a", "secondary", map[string]any{"visibility": "community"})
	add("admin", "secondary", map[string]any{"visibility": "public"})
	owner, err := clients["drain-b"].listed(ctx, d.secondary[drainImages], "")
	if err != nil {
		t.Fatal(err)
	}
	projectB := owner["owner"].(string)
	for _, status := range []string{"pending", "accepted", "rejected"} {
		id := add("drain-a", "secondary", map[string]any{"visibility": "shared"})
		if err := clients["drain-a"].call(ctx, http.MethodPost, "/v2/images/"+id+"/members", map[string]any{"member": projectB}, http.StatusOK); err != nil {
			t.Fatal(err)
		}
		if status != "pending" {
			if err := clients["drain-b"].call(ctx, http.MethodPut, "/v2/images/"+id+"/members/"+projectB, map[string]any{"status": status}, http.StatusOK); err != nil {
				t.Fatal(err)
			}
		}
	}
	both := add("drain-b", "secondary", nil)
	if err := s.glance.call(ctx, http.MethodPost, "/v2/images/"+both+"/import",
		map[string]any{"method": map[string]any{"name": "copy-image"}, "stores": []string{"primary"}}, http.StatusAccepted); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 3*time.Minute, time.Second, "image "+both+" in both stores", func() error {
		img, err := s.glance.listed(ctx, both, "visibility=all")
		if err != nil {
			return err
		}
		if img["stores"] != "primary,secondary" && img["stores"] != "secondary,primary" {
			return fmt.Errorf("image %s is in stores %v", both, img["stores"])
		}
		return nil
	})
	d.deactivated = add("drain-a", "secondary", nil)
	if err := s.glance.call(ctx, http.MethodPost, "/v2/images/"+d.deactivated+"/actions/deactivate", nil, http.StatusNoContent); err != nil {
		t.Fatal(err)
	}
}

// drainCommit commits the drain annotation and has the Job survive the deletion of its pod and a deactivated image.
func (d *drainRun) drainCommit(t *testing.T) {
	s := d.s
	d.before = s.render(t, "before")
	s.edit(t, "  name: secondary\n  namespace: "+s.ns+"\n", "  name: secondary\n  namespace: "+s.ns+"\n  annotations:\n    glance.openstack.c5c3.io/drain-to: primary\n")
	d.draining = s.render(t, "draining")
	if out, code := s.explain(t, d.before, d.draining); code != 0 || !strings.Contains(out, "store secondary drains into primary") {
		t.Fatalf("explain of the drain commit: exit %d, want 0 listing the drain:\n%s", code, out)
	}
	objects := readFile(t, d.draining)
	s.apply(t, objects, labelComponent+" in (backends,config)")
	// The record comes with the Deployments' step, before its Job:
	// the controller says the drain waits for it.
	s.apply(t, objects, "app.kubernetes.io/component notin (db-contract,store-drain)")
	s.waitCondition(t, "glances", "glance", "StoresDrained", metav1.ConditionFalse, "waiting for the drain Job")
	if err := s.n.WaitAvailable(s.ns, "glance", 5*time.Minute); err != nil {
		t.Fatal(err)
	}
	d.job = jobName(t, objects, "store-drain")
	s.apply(t, objects, "app.kubernetes.io/component in (db-contract,store-drain)")
	var log string
	d.first, log = s.crashAfterFirstImage(t, d.job)
	d.logs = map[string]string{d.first: log}
	// The next pod moves every active image and fails naming the
	// deactivated one, which Glance will not copy; reactivated, the
	// Job's retry moves it.
	testenv.Eventually(t, 8*time.Minute, 500*time.Millisecond, "the record failing on the deactivated image", func() error {
		cm, err := s.n.Client.CoreV1().ConfigMaps(s.ns).Get(context.Background(), recordName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if cm.Data["state"] != "Failed" || cm.Data["remaining"] != "1" || !strings.Contains(cm.Data["record.json"], d.deactivated+"\": \"status deactivated") {
			return fmt.Errorf("the record says %s, %s left", cm.Data["state"], cm.Data["remaining"])
		}
		return nil
	})
	ctx, cancel := withTimeout(time.Minute)
	defer cancel()
	if err := s.glance.call(ctx, http.MethodPost, "/v2/images/"+d.deactivated+"/actions/reactivate", nil, http.StatusNoContent); err != nil {
		t.Fatal(err)
	}
	s.waitJob(t, d.job, 10*time.Minute)
	for pod, log := range s.jobLogs(t, d.job) {
		d.logs[pod] = log
	}
	if len(d.logs) < 3 {
		t.Errorf("the Job ran %d pod(s), want the deleted one, the one that failed on the deactivated image and the one that moved it", len(d.logs))
	}
	t.Logf("the drain Job ran %d pods", len(d.logs))
}

// drainLogs reads what each of the Job's pods said.
func (d *drainRun) drainLogs(t *testing.T) {
	s := d.s
	movedLine := regexp.MustCompile(`(?m)^drain: image ([0-9a-f-]+): copied to primary, sha512 verified, removed from secondary$`)
	var last string
	for pod, log := range d.logs {
		s.noCredential(t, "the log of pod "+pod, log)
		if strings.Contains(log, "drain: Complete: ") {
			if last != "" {
				t.Errorf("pods %s and %s both say Complete", last, pod)
			}
			last = pod
		}
	}
	if n := len(movedLine.FindAllString(d.logs[d.first], -1)); n == 0 {
		t.Errorf("the deleted pod %s logged no moved image:\n%s", d.first, d.logs[d.first])
	}
	named := false
	for _, log := range d.logs {
		named = named || strings.Contains(log, "drain: image "+d.deactivated+": status deactivated")
	}
	if !named {
		t.Errorf("no pod's log names the deactivated image %s", d.deactivated)
	}
	if last == "" || last == d.first {
		t.Fatalf("no later pod's log says Complete: %v", d.logs)
	}
	// The resumed run found only what the deleted one left, moved
	// each, and says so.
	var left int
	if _, err := fmt.Sscanf(d.logs[last][strings.Index(d.logs[last], "drain: "):], "drain: %d images have a location in secondary", &left); err != nil {
		t.Fatalf("the last pod's log: %v\n%s", err, d.logs[last])
	}
	moved := movedLine.FindAllStringSubmatch(d.logs[last], -1)
	if left == 0 || left >= len(d.secondary) || len(moved) != left ||
		!strings.Contains(d.logs[last], fmt.Sprintf("drain: Complete: %d moved, 0 failed, 0 left in secondary", left)) {
		t.Errorf("the last pod found %d of %d images left and moved %d, want it to resume with what the deleted pod left:\n%s", left, len(d.secondary), len(moved), d.logs[last])
	}
	for _, m := range moved {
		if !slices.Contains(d.secondary, m[1]) {
			t.Errorf("the last pod moved image %s, which was not in secondary", m[1])
		}
	}
}

// recordComplete reads the record back and the controller's StoresDrained.
func (d *drainRun) recordComplete(t *testing.T) {
	s := d.s
	out, err := s.n.Kubectl(nil, "-n", s.ns, "get", "configmap", recordName, "-o", "yaml")
	if err != nil {
		t.Fatal(err)
	}
	d.record = filepath.Join(s.t.TempDir(), "drained.yaml")
	if err := os.WriteFile(d.record, out, 0o600); err != nil {
		t.Fatal(err)
	}
	s.noCredential(t, "the record", string(out))
	cm, err := s.n.Client.CoreV1().ConfigMaps(s.ns).Get(context.Background(), recordName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var rec struct {
		Moved  []string          `json:"moved"`
		Failed map[string]string `json:"failed"`
	}
	if err := json.Unmarshal([]byte(cm.Data["record.json"]), &rec); err != nil {
		t.Fatal(err)
	}
	if cm.Data["state"] != "Complete" || cm.Data["remaining"] != "0" || len(rec.Failed) != 0 || cm.Data["from"] != "secondary" || cm.Data["to"] != "primary" ||
		cm.Data["job"] != d.job {
		t.Errorf("the record: %v, want Complete, 0 left, job %s", cm.Data, d.job)
	}
	if cm.Labels["app.kubernetes.io/managed-by"] != "glance-krm" || cm.Labels[labelComponent] != "drain-record" || cm.Labels["glance.openstack.c5c3.io/glance"] != "glance" {
		t.Errorf("the record's labels are no longer the render's: %v", cm.Labels)
	}
	// The last run's record holds what it moved; the resumed run
	// moves what the deleted one left.
	for _, id := range rec.Moved {
		if !slices.Contains(d.secondary, id) {
			t.Errorf("the record moved image %s, which was not in secondary", id)
		}
	}
	s.waitCondition(t, "glances", "glance", "StoresDrained", metav1.ConditionTrue, "")
}

// removalCommit commits the store's removal, which explain passes only with the live record.
func (d *drainRun) removalCommit(t *testing.T) {
	s := d.s
	if d.record == "" {
		t.Fatal("no record")
	}
	s.removeBackend(t, "secondary")
	removed := s.render(t, "removed")
	if out, code := s.explain(t, d.draining, removed); code != 1 {
		t.Errorf("explain of the removal without the record: exit %d, want 1:\n%s", code, out)
	}
	out, code := s.explain(t, "--drain-record", d.record, d.draining, removed)
	if code != 0 || !strings.Contains(out, "says is complete") {
		t.Fatalf("explain of the removal with the record: exit %d, want 0:\n%s", code, out)
	}
	objects := readFile(t, removed)
	s.apply(t, objects, labelComponent+" in (backends,config)")
	if _, err := s.n.Kubectl(nil, "-n", s.ns, "delete", "glancebackend", "secondary"); err != nil {
		t.Fatal(err)
	}
	old := s.apiPods(t)
	dep, err := s.n.Client.AppsV1().Deployments(s.ns).Get(context.Background(), "glance", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s.apply(t, objects, "app.kubernetes.io/component notin (db-contract,store-drain)")
	testenv.Eventually(t, 6*time.Minute, time.Second, "the rollout without secondary", func() error { return s.rolledOut(dep.Generation, old) })
	ctx, cancel := withTimeout(5 * time.Minute)
	defer cancel()
	if stores, err := s.glance.stores(ctx); err != nil || len(stores) != 1 || !stores["primary"] {
		t.Errorf("GET /v2/info/stores after the removal: %v, %v; want primary alone", stores, err)
	}
	for id, want := range d.images {
		img, err := s.glance.image(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if img["stores"] != "primary" {
			t.Errorf("image %s is in stores %q, want primary alone", id, img["stores"])
		}
		if got, _, err := s.glance.sum(ctx, id); err != nil || got != want {
			t.Errorf("image %s: %v, the same bytes as uploaded: %v", id, err, got == want)
		}
		if s.inBucket(t, bucket(s.rel, 2), id) {
			t.Errorf("image %s still has data in secondary's bucket", id)
		}
	}
}

// authenticates: the rendered [keystone_authtoken] validates tokens.
func (s *scenario) authenticates(t *testing.T) {
	ctx, cancel := withTimeout(time.Minute)
	defer cancel()
	anonymous := *s.glance
	anonymous.token = ""
	for _, c := range []struct {
		g    *glanceClient
		op   string
		want int
	}{{s.glance, "list images with a token", http.StatusOK}, {&anonymous, "list images without a token", http.StatusUnauthorized}} {
		resp, err := c.g.do(ctx, c.op, http.MethodGet, "/v2/images", nil, c.want, nil)
		if err != nil {
			t.Error(err)
			continue
		}
		_ = resp.Body.Close()
	}
}

// crashAfterFirstImage waits for the drain Job's first pod to log its
// first moved image and deletes the pod (a crash, as far as the Job is
// concerned); it returns the pod's name and its log until then.
func (s *scenario) crashAfterFirstImage(t *testing.T, job string) (string, string) {
	t.Helper()
	var pod, log string
	testenv.Eventually(t, 8*time.Minute, 500*time.Millisecond, "the drain's first moved image", func() error {
		pods := s.jobPods(t, job)
		if len(pods) == 0 {
			return fmt.Errorf("no pod of Job %s yet", job)
		}
		pod = pods[0].Name
		out, err := s.n.Kubectl(nil, "-n", s.ns, "logs", pod, "--all-containers")
		if err != nil {
			return err
		}
		log = string(out)
		if strings.Contains(log, "removed from secondary") {
			return nil
		}
		if pods[0].Status.Phase == corev1.PodSucceeded || pods[0].Status.Phase == corev1.PodFailed {
			t.Fatalf("the drain's first pod ended (%s) before it was deleted:\n%s", pods[0].Status.Phase, log)
		}
		return fmt.Errorf("pod %s has moved nothing yet", pod)
	})
	if _, err := s.n.Kubectl(nil, "-n", s.ns, "delete", "pod", pod, "--wait=false"); err != nil {
		t.Fatal(err)
	}
	return pod, log
}

// jobPods are a Job's pods, oldest first.
func (s *scenario) jobPods(t *testing.T, job string) []corev1.Pod {
	t.Helper()
	pods, err := s.n.Client.CoreV1().Pods(s.ns).List(context.Background(), metav1.ListOptions{LabelSelector: "batch.kubernetes.io/job-name=" + job})
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(pods.Items, func(a, b corev1.Pod) int { return a.CreationTimestamp.Compare(b.CreationTimestamp.Time) })
	return pods.Items
}

// jobLogs are the logs of the Job's pods the API server still has.
func (s *scenario) jobLogs(t *testing.T, job string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, p := range s.jobPods(t, job) {
		b, err := s.n.Kubectl(nil, "-n", s.ns, "logs", p.Name, "--all-containers")
		if err != nil {
			t.Errorf("the log of pod %s: %v", p.Name, err)
		}
		out[p.Name] = string(b)
	}
	return out
}

// noCredential fails when text holds a credential of the node's Secrets.
func (s *scenario) noCredential(t *testing.T, what, text string) {
	t.Helper()
	for name, v := range map[string]string{"the S3 secret key": s3Secret, "the service user's password": servicePassword,
		"the database password": dbPassword, "Keystone's admin password": keystoneAdminPassword} {
		if strings.Contains(text, v) || strings.Contains(text, strings.TrimSpace(v)) {
			t.Errorf("%s holds %s", what, name)
		}
	}
}

// render builds the example as it stands into a file named for the
// commit, as explain reads a render.
func (s *scenario) render(t *testing.T, name string) string {
	t.Helper()
	f := filepath.Join(s.t.TempDir(), name+".yaml")
	if err := os.WriteFile(f, build(t, s.kustomize, s.dir), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

// edit replaces one text of the example's glance.yaml.
func (s *scenario) edit(t *testing.T, old, repl string) {
	t.Helper()
	f := filepath.Join(s.dir, "glance.yaml")
	b := readFile(t, f)
	if !bytes.Contains(b, []byte(old)) {
		t.Fatalf("%s holds no %q", f, old)
	}
	if err := os.WriteFile(f, bytes.Replace(b, []byte(old), []byte(repl), 1), 0o644); err != nil {
		t.Fatal(err)
	}
}

// removeBackend deletes a GlanceBackend's document from glance.yaml.
func (s *scenario) removeBackend(t *testing.T, name string) {
	t.Helper()
	f := filepath.Join(s.dir, "glance.yaml")
	docs := strings.Split(string(readFile(t, f)), "\n---\n")
	kept := slices.DeleteFunc(slices.Clone(docs), func(d string) bool {
		return strings.Contains(d, "\nkind: GlanceBackend\n") && strings.Contains(d, "\n  name: "+name+"\n")
	})
	if len(kept) != len(docs)-1 {
		t.Fatalf("%s holds %d GlanceBackends named %s", f, len(docs)-len(kept), name)
	}
	if err := os.WriteFile(f, []byte(strings.Join(kept, "\n---\n")), 0o644); err != nil {
		t.Fatal(err)
	}
}

// explain runs the function's explain; its output and exit code.
func (s *scenario) explain(t *testing.T, args ...string) (string, int) {
	t.Helper()
	out, err := exec.Command(s.fnBin, append([]string{"explain"}, args...)...).CombinedOutput()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return string(out), exit.ExitCode()
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(out), 0
}

func readFile(t *testing.T, f string) []byte {
	t.Helper()
	b, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
