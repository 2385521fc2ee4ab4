//go:build e2e

package node_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/c5c3/glance-krm/internal/testenv"
	"github.com/c5c3/glance-krm/internal/testenv/node"
)

var (
	fluxKustomizations = schema.GroupVersionResource{Group: "kustomize.toolkit.fluxcd.io", Version: "v1", Resource: "kustomizations"}
	fluxBuckets        = schema.GroupVersionResource{Group: "source.toolkit.fluxcd.io", Version: "v1", Resource: "buckets"}
)

// fluxBucket is the S3 bucket CI publishes make flux-render's folders to,
// on the cluster's S3 server: Flux's Bucket source, without internet.
const fluxBucket = "flux-glance"

// fluxSteps are examples/flux's three Kustomizations, in their order.
var fluxSteps = []string{"glance-prepare", "glance-workload", "glance-after"}

func fluxImages(t *testing.T, tools gitopsTools) []string {
	var archives []string
	for _, name := range []string{"source-controller", "kustomize-controller"} {
		_, archive := binaryImageOf(t, tools, name)
		archives = append(archives, archive)
	}
	return archives
}

// installFlux installs source-controller and kustomize-controller from
// their upstream config (tests/node/testdata/flux).
func installFlux(t *testing.T, n *node.Node, tools gitopsTools) {
	t.Helper()
	var pairs []string
	extra := map[string]string{}
	for _, name := range []string{"source-controller", "kustomize-controller"} {
		ref, _ := binaryImageOf(t, tools, name)
		image, tag := splitRef(ref)
		key := strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
		pairs = append(pairs, key+"_IMAGE_NAME", image, key+"_IMAGE_TAG", tag)
		extra[name] = filepath.Join(tools.dir, "flux-config", name)
	}
	installManifests(t, n, "flux", extra, strings.NewReplacer(pairs...))
	for _, d := range []string{"source-controller", "kustomize-controller"} {
		if err := n.WaitAvailable("flux-system", d, 3*time.Minute); err != nil {
			t.Fatal(err)
		}
	}
}

// fluxApp is one Glance published as make flux-render's folders and
// applied by examples/flux's three chained Kustomizations.
type fluxApp struct {
	s        *scenario
	rendered string // make flux-render's OUT, kept between commits
	// requested is the last publication's reconcile.fluxcd.io/requestedAt
	// on the Bucket ("" on day 1, which creates the Bucket).
	requested string
	loop      *clientLoop
	// the store drain's: what the drained store held (id → sum), the
	// render with the drain, and the live record read back.
	drained  map[string][32]byte
	draining string
	record   string
}

func runFlux(t *testing.T, s *scenario) {
	s.t, s.engine = t, "Flux"
	f := &fluxApp{s: s, rendered: filepath.Join(t.TempDir(), "rendered")}
	defer func() {
		if f.loop != nil {
			f.loop.finish()
		}
	}()
	s.check("day 1: one publication applies in three steps to Ready: db-sync complete before the ReplicaSet, db-contract after the pods are ready", true, f.day1)
	s.check("both stores listed through the Service, the default flagged", false, s.listStores)
	s.check("uploads land in each store's bucket and download byte-identical", false, s.uploads)
	s.check("the controller writes Ready, BackendsReady and DatabaseReady on the live objects", false, s.controllerReady)
	s.check("no drift: 2 minutes of reconciles asked for, each ending Ready, no object configured or created, every inventory object's generation kept", false, f.noDrift)
	s.check("a failing db-sync (a wrong database password published) stops the chain: no new ReplicaSet, the old pods serve; the fix recovers", false, f.failingDBSync)
	s.check("8 long downloads and 8 long uploads at once: probes pass, no restart", false, s.underLoad)
	s.check("a default flip as a publication: Ready again, an old pod's ConfigMap there while it runs", false, f.flip)
	s.check("a store drain as a publication ("+fluxDrainFrom+" into the default, "+fluxDrainTo+", behind Keystone): explain lists it, the Job runs in the last step, the record Complete, every image it held in the default alone, StoresDrained", true, f.fluxDrain)
	s.check("the drained store's removal as a publication: explain blocks it without the record and passes it with the live one; the GlanceBackend pruned, every image downloads byte-identical from "+fluxDrainTo+" alone", false, f.fluxRemoval)
	s.check("a skipped release published ("+s.rel.name+" over one release): the Glance Stalled with UpgradePathInvalid naming the Job, the last step not Ready", false, f.skippedRelease)
	s.check("the client loop from the first Available: zero failed requests", false, func(t *testing.T) {
		l := f.loop
		f.loop = nil
		loopClean(t, l, "Flux", s.rel.name)
	})
}

// publish is CI's part: make flux-render, then the folders uploaded to
// the bucket (what left them removed), and Flux asked to look now.
func (f *fluxApp) publish(t *testing.T) time.Time {
	t.Helper()
	render := exec.Command("bash", filepath.Join(testenv.RepoRoot(), "hack", "flux-prerender.sh"), f.s.dir, f.rendered)
	render.Env = append(os.Environ(), "KUSTOMIZE="+f.s.kustomize, "GLANCE_KRM_FN="+f.s.fnBin)
	if out, err := render.CombinedOutput(); err != nil {
		t.Fatalf("make flux-render: %v\n%s", err, out)
	}
	ctx, cancel := withTimeout(time.Minute)
	defer cancel()
	keep := map[string]bool{}
	for _, file := range testenv.Files(t, f.rendered) {
		b := readFile(t, filepath.Join(f.rendered, file))
		if _, err := f.s.s3.PutObject(ctx, fluxBucket, file, bytes.NewReader(b), int64(len(b)), minio.PutObjectOptions{}); err != nil {
			t.Fatal(err)
		}
		keep[file] = true
	}
	for obj := range f.s.s3.ListObjects(ctx, fluxBucket, minio.ListObjectsOptions{Recursive: true}) {
		if obj.Err != nil {
			t.Fatal(obj.Err)
		}
		if !keep[obj.Key] {
			if err := f.s.s3.RemoveObject(ctx, fluxBucket, obj.Key, minio.RemoveObjectOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	at := time.Now()
	f.requested = at.Format(time.RFC3339Nano)
	if _, err := f.s.n.Kubectl(nil, "-n", "flux-system", "annotate", "--overwrite", "bucket", "glance",
		"reconcile.fluxcd.io/requestedAt="+f.requested); err != nil {
		if !strings.Contains(err.Error(), "NotFound") {
			t.Fatal(err)
		}
		f.requested = "" // day 1: the Bucket is created after
	}
	return at
}

func (f *fluxApp) day1(t *testing.T) {
	defer hold(deploySlots)()
	f.s.prepare(t)
	f.s.withRoute(t)
	makeBuckets(t, f.s.s3, fluxBucket)
	first := f.publish(t)
	f.loop = f.s.startLoopWhenAvailable(t)
	// examples/flux/flux.yaml, its source a Bucket of the cluster's S3
	// server instead of an OCI registry.
	secret := fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata: {name: glance-bucket, namespace: flux-system}\nstringData:\n  accesskey: %q\n  secretkey: %q\n", s3Access, s3Secret)
	source := fmt.Sprintf(`apiVersion: source.toolkit.fluxcd.io/v1
kind: Bucket
metadata: {name: glance, namespace: flux-system}
spec:
  interval: 1m
  provider: generic
  bucketName: %s
  endpoint: s3.%s.svc:7070
  insecure: true
  region: %s
  secretRef: {name: glance-bucket}
`, fluxBucket, infraNamespace, s3Region)
	docs := []string{secret, source}
	for _, doc := range strings.Split(string(readFile(t, filepath.Join(testenv.RepoRoot(), "examples", "flux", "flux.yaml"))), "\n---\n") {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
			t.Fatal(err)
		}
		if u.GetKind() != "Kustomization" {
			continue
		}
		if err := unstructured.SetNestedField(u.Object, "Bucket", "spec", "sourceRef", "kind"); err != nil {
			t.Fatal(err)
		}
		b, err := yaml.Marshal(u.Object)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, string(b))
	}
	if err := f.s.n.Apply(strings.Join(docs, "---\n")); err != nil {
		t.Fatal(err)
	}
	f.waitReady(t, 15*time.Minute)
	gitopsBench.record("Flux", f.s.rel.name, "day 1", time.Since(first))
	f.s.orderFromCluster(t)
	f.s.routeAfterWorkload(t)
}

// waitReady waits until the Bucket holds the last publication and each
// step applied it and is Ready.
func (f *fluxApp) waitReady(t *testing.T, limit time.Duration) {
	t.Helper()
	testenv.Eventually(t, limit, 2*time.Second, "the three Kustomizations Ready at the bucket's revision", func() error {
		b, err := f.s.resource(t, fluxBuckets, "flux-system", "glance")
		if err != nil {
			return err
		}
		want, _, _ := unstructured.NestedString(b.Object, "status", "artifact", "revision")
		// The Bucket has fetched the last publication: until it handled
		// the request, Ready at the revision before says nothing.
		handled, _, _ := unstructured.NestedString(b.Object, "status", "lastHandledReconcileAt")
		if want == "" || !readyAt(b, "") || handled != f.requested {
			return fmt.Errorf("Bucket glance (the publication asked for at %q): %v", f.requested, b.Object["status"])
		}
		for _, name := range fluxSteps {
			k, err := f.s.resource(t, fluxKustomizations, "flux-system", name)
			if err != nil {
				return err
			}
			if !readyAt(k, want) {
				return fmt.Errorf("Kustomization %s at %s: %v", name, want, k.Object["status"])
			}
		}
		return nil
	})
}

// readyAt: Ready=True for the object's generation, and (for a
// Kustomization) the revision applied.
func readyAt(u *unstructured.Unstructured, revision string) bool {
	if revision != "" {
		if got, _, _ := unstructured.NestedString(u.Object, "status", "lastAppliedRevision"); got != revision {
			return false
		}
	}
	conditions, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conditions {
		m, _ := c.(map[string]any)
		if m["type"] == "Ready" {
			gen, _ := m["observedGeneration"].(int64)
			return m["status"] == "True" && gen == u.GetGeneration()
		}
	}
	return false
}

func (f *fluxApp) flip(t *testing.T) {
	defer hold(rolloutSlots)()
	oldPods := f.s.apiPods(t)
	flipDefault(t, filepath.Join(f.s.dir, "glance.yaml"))
	began := f.publish(t)
	var missing []string
	testenv.Eventually(t, 15*time.Minute, 300*time.Millisecond, "the flip applied", func() error {
		missing = append(missing, f.s.missingConfigMaps(t)...)
		return f.s.rolledOut(0, oldPods)
	})
	f.waitReady(t, 10*time.Minute)
	gitopsBench.record("Flux", f.s.rel.name, "default flip", time.Since(began))
	if len(missing) > 0 {
		t.Errorf("a pod's ConfigMap was gone while the pod ran: %v", missing[:min(5, len(missing))])
	}
	ctx, cancel := withTimeout(time.Minute)
	defer cancel()
	stores, err := f.s.glance.stores(ctx)
	if err != nil || !stores["secondary"] || stores["primary"] {
		t.Errorf("after the flip GET /v2/info/stores: %v, %v; want secondary the default", stores, err)
	}
}

// failingDBSync publishes the Glance pointed at a database Secret with a
// wrong password: the first step waits for its db-sync Job, which fails,
// so the workload step never applies the new Deployment.
func (f *fluxApp) failingDBSync(t *testing.T) {
	before := f.s.replicaSets(t)
	f.s.wrongDatabasePassword(t, true)
	f.publish(t)
	testenv.Eventually(t, 10*time.Minute, 2*time.Second, "the first step failed", func() error {
		b, err := f.s.resource(t, fluxBuckets, "flux-system", "glance")
		if err != nil {
			return err
		}
		want, _, _ := unstructured.NestedString(b.Object, "status", "artifact", "revision")
		k, err := f.s.resource(t, fluxKustomizations, "flux-system", fluxSteps[0])
		if err != nil {
			return err
		}
		attempted, _, _ := unstructured.NestedString(k.Object, "status", "lastAttemptedRevision")
		if attempted != want || readyAt(k, "") || !failedHealth(k) {
			return fmt.Errorf("%s at %s: %v", fluxSteps[0], want, k.Object["status"])
		}
		return nil
	})
	f.s.sameReplicaSets(t, before)
	f.s.wrongDatabasePassword(t, false)
	defer hold(rolloutSlots)()
	f.publish(t)
	f.waitReady(t, 10*time.Minute)
	f.s.sameReplicaSets(t, before)
}

// failedHealth: the Kustomization's Ready condition is False with a
// health check's failure.
func failedHealth(u *unstructured.Unstructured) bool {
	conditions, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conditions {
		m, _ := c.(map[string]any)
		if m["type"] == "Ready" && m["status"] == "False" {
			return m["reason"] == "HealthCheckFailed"
		}
	}
	return false
}

// skippedRelease publishes the Glance at a release two steps on: Flux
// applies it (nothing in a stateless build knows the schema's release),
// the db-sync Job of the skipped-to release runs, and the controller,
// which saw the schema at the old release, refuses the jump: the Glance is
// Stalled, which the last step's healthCheckExprs call failed.
func (f *fluxApp) skippedRelease(t *testing.T) {
	from, to := f.s.rel.name, skipFrom(t, f.s.rel.name)
	defer hold(rolloutSlots)()
	f.s.upgradeTo(t, releaseIn(t, releases, to, f.s.rel.id))
	f.publish(t)
	says := "migrated the database schema from " + from + " (status.installedRelease) to " + to
	testenv.Eventually(t, 8*time.Minute, 2*time.Second, "the Glance Stalled and not Ready", func() error {
		c := f.s.conditions(t, "glances", "glance")
		stalled, ready := c["Stalled"], c["Ready"]
		if stalled.Status != metav1.ConditionTrue || !strings.Contains(stalled.Message, says) ||
			ready.Status != metav1.ConditionFalse || ready.Reason != "UpgradePathInvalid" {
			return fmt.Errorf("Stalled %+v, Ready %+v", stalled, ready)
		}
		t.Logf("the Glance: %s", stalled.Message)
		return nil
	})
	testenv.Eventually(t, 5*time.Minute, 2*time.Second, "Kustomization "+fluxSteps[2]+" failed on the Glance", func() error {
		k, err := f.s.resource(t, fluxKustomizations, "flux-system", fluxSteps[2])
		if err != nil {
			return err
		}
		if readyAt(k, "") || !failedHealth(k) {
			return fmt.Errorf("%s: %v", fluxSteps[2], k.Object["status"])
		}
		t.Logf("Flux: %s", readyMessage(k))
		return nil
	})
}

// skipFrom is the release two series after from, which skips one.
func skipFrom(t *testing.T, from string) string {
	t.Helper()
	for i, name := range upgradeChain {
		if name == from && i+2 < len(upgradeChain) {
			return upgradeChain[i+2]
		}
	}
	t.Fatalf("no release two series after %s in %v", from, upgradeChain)
	return ""
}

// readyMessage is an object's Ready condition's message.
func readyMessage(u *unstructured.Unstructured) string {
	conditions, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conditions {
		m, _ := c.(map[string]any)
		if m["type"] == "Ready" {
			return fmt.Sprint(m["message"])
		}
	}
	return ""
}
