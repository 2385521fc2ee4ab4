//go:build e2e

package node_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/c5c3/glance-krm/internal/testenv"
	"github.com/c5c3/glance-krm/internal/testenv/node"
)

var applications = schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "applications"}

// argoImages are Argo CD's image (its multi-call binary over Debian's git
// and redis-server, as upstream's image holds git); glance-krm's plugin
// sidecar comes from the node's registry (ours.cmp).
func argoImages(t *testing.T, tools gitopsTools) []string {
	_, archive := argocdImage(t, tools)
	return []string{archive}
}

func argocdImage(t *testing.T, tools gitopsTools) (ref, archive string) {
	t.Helper()
	bin := filepath.Join(tools.dir, "argocd")
	key, err := fileKey(bin)
	if err != nil {
		t.Fatal(err)
	}
	key += "-" + filepath.Base(tools.rootfs)
	files := map[string]node.File{
		"/usr/local/bin/argocd": {From: bin, Mode: 0o755},
		// The repository is owned by the test's user, not Argo CD's.
		"/etc/gitconfig": {Content: []byte("[safe]\n\tdirectory = *\n"), Mode: 0o644},
		// The repo-server runs this on every revision it renders (upstream's
		// image ships one) and reads its output only where signatures are
		// verified, which the test does not configure: say what git says,
		// never fail.
		"/usr/local/bin/git-verify-wrapper.sh": {Content: []byte("#!/bin/sh\ngit verify-commit \"$1\" 2>&1 || true\n"), Mode: 0o755},
	}
	// upstream's image names each role a link to the one binary
	for _, role := range []string{"argocd-application-controller", "argocd-repo-server", "argocd-cmp-server", "argocd-git-ask-pass"} {
		files["/usr/local/bin/"+role] = node.File{Link: "argocd"}
	}
	// and has the user argocd (999), whose HOME git reads.
	for name, line := range map[string]string{"passwd": "argocd:x:999:999:Argo CD:/home/argocd:/bin/sh\n", "group": "argocd:x:999:\n"} {
		b, err := os.ReadFile(filepath.Join(tools.rootfs, "etc", name))
		if err != nil {
			t.Fatal(err)
		}
		files["/etc/"+name] = node.File{Content: append(b, line...), Mode: 0o644}
	}
	// What the image is made of names it: the binary, the root file system
	// and the files written here.
	h := sha256.New()
	for _, name := range slices.Sorted(maps.Keys(files)) {
		fmt.Fprintf(h, "%s %s %s %q\n", name, files[name].From, files[name].Link, files[name].Content)
	}
	key += "-" + hex.EncodeToString(h.Sum(nil))[:8]
	ref = "localhost/glance-krm-node/argocd:" + key
	archive = node.ArchiveName(node.Cache(), "argocd", key)
	if err := node.BuildArchive(archive, node.Image{Ref: ref, Dir: tools.rootfs, Files: files, User: "999:999", WorkingDir: "/home/argocd"}); err != nil {
		t.Fatal(err)
	}
	return ref, archive
}

// installArgoCD installs upstream's headless core install with the
// plugin sidecar (tests/node/testdata/argocd) reading repo, its image
// cmp pinned by digest.
func installArgoCD(t *testing.T, n *node.Node, tools gitopsTools, repo *gitRepo, cmp string) {
	t.Helper()
	ref, _ := argocdImage(t, tools)
	name, tag := splitRef(ref)
	cmpName, cmpDigest, _ := strings.Cut(cmp, "@")
	examples := filepath.Join(testenv.RepoRoot(), "examples", "argocd")
	installManifests(t, n, "argocd", map[string]string{
		"upstream/core-install.yaml": filepath.Join(tools.dir, "argocd-config", "core-install.yaml"),
		"repo-server-patch.yaml":     filepath.Join(examples, "repo-server-patch.yaml"),
		"argocd-cm-health.yaml":      filepath.Join(examples, "argocd-cm-health.yaml"),
	}, strings.NewReplacer("ARGOCD_IMAGE_NAME", name, "ARGOCD_IMAGE_TAG", tag, "GIT_HOST_PATH", filepath.Dir(repo.bare),
		"CMP_IMAGE_NAME", cmpName, "CMP_IMAGE_DIGEST", cmpDigest))
	for _, d := range []string{"argocd-redis", "argocd-repo-server"} {
		if err := n.WaitAvailable("argocd", d, 3*time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	pulledByDigest(t, n, "argocd", "app.kubernetes.io/name=argocd-repo-server", "glance-krm", cmp)
	testenv.Eventually(t, 3*time.Minute, time.Second, "StatefulSet argocd-application-controller ready", func() error {
		s, err := n.Client.AppsV1().StatefulSets("argocd").Get(context.Background(), "argocd-application-controller", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if s.Status.ReadyReplicas < 1 {
			return fmt.Errorf("status %+v", s.Status)
		}
		return nil
	})
}

// argoApp is one Glance as an Argo CD Application of the test's
// repository, in the folder glance/.
type argoApp struct {
	s      *scenario
	repo   *gitRepo
	loop   *clientLoop // from the first Available to the end
	sha    string      // the last commit
	images []stored    // written before each upgrade, read after every later one
}

func runArgo(t *testing.T, s *scenario, repo *gitRepo, chain []release) {
	s.t, s.engine = t, "Argo CD"
	a := &argoApp{s: s, repo: repo}
	defer a.stopLoop(t)
	s.check("day 1: one commit syncs to Synced and Healthy, wave by wave: db-sync complete before the ReplicaSet, db-contract after the pods are ready", true, a.day1)
	s.check("both stores listed through the Service, the default flagged", false, s.listStores)
	s.check("uploads land in each store's bucket and download byte-identical", false, s.uploads)
	s.check("the controller writes Ready, BackendsReady and DatabaseReady on the live objects", false, s.controllerReady)
	s.check("the autoscaler computes: ScalingActive=True", false, s.autoscaler)
	s.check("8 long downloads and 8 long uploads at once: probes pass, no restart", false, s.underLoad)
	s.check("no drift: 2 minutes of hard refreshes (the plugin renders again each time), Synced throughout, no sync operation; the refresh cost against the plugin without the function and plain YAML measured meanwhile", false, a.noDrift)
	s.check("a failing db-sync (a wrong database password committed) fails the sync: no new ReplicaSet, the old pods serve; the fix commit recovers", false, a.failingDBSync)
	s.check("a default flip as a commit: Synced and Healthy, an old pod's ConfigMap there while it runs, the old copies pruned after", false, a.flip)
	for _, to := range chain {
		s.check("an upgrade from "+s.rel.name+" as one commit under traffic: db-sync before the new pods, db-contract after the old are gone, every image read through a pod of each release in the mixed window", true, a.upgrade(to))
	}
	s.check("the client loop from the first Available: zero failed requests", false, a.loopClean)
	s.check("a downgrade committed ("+s.rel.name+" back to the release before): the Glance Stalled with DowngradeNotSupported, Degraded in Argo CD naming it", false, a.downgrade)
}

// appFiles is the app folder of the repository: the Glance and its
// stores, and the function run from the sidecar's PATH (examples/argocd/app).
func (a *argoApp) appFiles(t *testing.T) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	for _, name := range []string{"glance.yaml", "kustomization.yaml", "glance-krm.yaml"} {
		files[name] = readFile(t, filepath.Join(a.s.dir, name))
	}
	files["glance-krm.yaml"] = []byte(strings.Replace(string(files["glance-krm.yaml"]), "path: "+a.s.fnBin, "path: glance-krm-fn", 1))
	return files
}

func (a *argoApp) commit(t *testing.T, message string) time.Time {
	t.Helper()
	a.sha = a.repo.commit(t, "glance", a.appFiles(t), message)
	at := time.Now()
	a.refresh(t, "normal")
	return at
}

// refresh asks Argo CD to compare again now, as a git webhook does.
func (a *argoApp) refresh(t *testing.T, kind string) {
	t.Helper()
	if _, err := a.s.n.Kubectl(nil, "-n", "argocd", "annotate", "--overwrite", "application", "glance", "argocd.argoproj.io/refresh="+kind); err != nil &&
		!strings.Contains(err.Error(), "NotFound") {
		t.Fatal(err)
	}
}

func (a *argoApp) day1(t *testing.T) {
	defer hold(deploySlots)()
	a.s.prepare(t)
	a.s.withRoute(t)
	first := a.commit(t, "day 1: "+a.s.rel.name)
	a.loop = a.s.startLoopWhenAvailable(t)
	app := readYAML(t, filepath.Join(testenv.RepoRoot(), "examples", "argocd", "application.yaml"))
	for path, v := range map[string]any{
		"spec.source.repoURL":                "file:///git/glance.git",
		"spec.source.targetRevision":         "main",
		"spec.source.path":                   "glance",
		"spec.destination.namespace":         a.s.ns,
		"spec.syncPolicy.automated.prune":    true,
		"spec.syncPolicy.automated.selfHeal": true,
		"spec.source.plugin.name":            "glance-krm-v1",
		"metadata.namespace":                 "argocd",
		"metadata.name":                      "glance",
		"spec.destination.server":            "https://kubernetes.default.svc",
		"spec.project":                       "default",
	} {
		if err := unstructured.SetNestedField(app.Object, v, strings.Split(path, ".")...); err != nil {
			t.Fatal(err)
		}
	}
	b, err := yaml.Marshal(app.Object)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.s.n.Apply(string(b)); err != nil {
		t.Fatal(err)
	}
	a.waitSynced(t, 10*time.Minute)
	gitopsBench.record("Argo CD", a.s.rel.name, "day 1", time.Since(first))
	a.s.orderFromCluster(t)
	a.s.routeAfterWorkload(t)
}

// argoStatus is what an Application says of the last commit.
type argoStatus struct {
	sync, revision, health, phase, message, started string
	outOfSync                                       []string
}

func (a *argoApp) status(t *testing.T) (argoStatus, error) {
	u, err := a.s.resource(t, applications, "argocd", "glance")
	if err != nil {
		return argoStatus{}, err
	}
	str := func(path ...string) string { v, _, _ := unstructured.NestedString(u.Object, path...); return v }
	st := argoStatus{
		sync: str("status", "sync", "status"), revision: str("status", "sync", "revision"),
		health: str("status", "health", "status"), phase: str("status", "operationState", "phase"),
		message: str("status", "operationState", "message"), started: str("status", "operationState", "startedAt"),
	}
	resources, _, _ := unstructured.NestedSlice(u.Object, "status", "resources")
	for _, r := range resources {
		m, _ := r.(map[string]any)
		if m["status"] != "Synced" {
			st.outOfSync = append(st.outOfSync, fmt.Sprintf("%v/%v %v", m["kind"], m["name"], m["status"]))
		}
	}
	conditions, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conditions {
		m, _ := c.(map[string]any)
		st.message += fmt.Sprintf("; %v: %v", m["type"], m["message"])
	}
	return st, nil
}

// waitSynced waits until the Application is Synced to the last commit,
// its operation succeeded and it is Healthy.
func (a *argoApp) waitSynced(t *testing.T, limit time.Duration) {
	t.Helper()
	testenv.Eventually(t, limit, 2*time.Second, "Application glance Synced and Healthy at "+a.sha, func() error { return a.synced(t) })
}

// synced: the Application is Synced to the last commit, its operation
// succeeded and it is Healthy.
func (a *argoApp) synced(t *testing.T) error {
	st, err := a.status(t)
	if err != nil {
		return err
	}
	if st.revision != a.sha || st.sync != "Synced" || st.health != "Healthy" || st.phase != "Succeeded" {
		return fmt.Errorf("%+v", st)
	}
	return nil
}

func available(d *appsv1.Deployment) bool {
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentAvailable && c.Status == "True" {
			return true
		}
	}
	return false
}

// loopClean stops the client loop: no request failed, and some went.
func loopClean(t *testing.T, l *clientLoop, engine, release string) {
	if l == nil {
		t.Fatal("no client loop ran")
	}
	ok, failed, errs, _ := l.finish()
	if failed > 0 {
		t.Errorf("%d of %d requests failed: %v", failed, ok+failed, errs[:min(5, len(errs))])
	}
	if ok == 0 {
		t.Error("no request went through: the Deployment was never Available")
	}
	t.Logf("%s: %d requests through the Service from the first Available, %d failed", engine, ok+failed, failed)
	gitopsBench.requests(engine, release, ok, failed)
}

func (a *argoApp) stopLoop(t *testing.T) {
	if a.loop != nil {
		a.loop.finish()
	}
}

func (a *argoApp) loopClean(t *testing.T) {
	l := a.loop
	a.loop = nil
	loopClean(t, l, "Argo CD", a.s.rel.name)
}

// noDrift: for two minutes of hard refreshes (the plugin renders again
// each time) nothing is OutOfSync and no sync operation starts (selfHeal
// would otherwise hide a drift by syncing it away). Each is followed by
// one of each floor Application, for the refresh cost.
func (a *argoApp) noDrift(t *testing.T) {
	defer a.floorApps(t)()
	before, err := a.status(t)
	if err != nil {
		t.Fatal(err)
	}
	since := time.Now().Add(-time.Second)
	took := map[string][]int{}
	for end := time.Now().Add(2 * time.Minute); time.Now().Before(end); {
		for _, name := range []string{"glance", "glance-floor", "glance-plain"} {
			took[name] = append(took[name], a.hardRefresh(t, name, since))
		}
		st, err := a.status(t)
		if err != nil {
			t.Fatal(err)
		}
		if st.sync != "Synced" || len(st.outOfSync) > 0 || st.health != "Healthy" {
			t.Fatalf("drift: %+v", st)
		}
		if st.started != before.started {
			t.Fatalf("a sync operation started at %s with nothing committed: %+v", st.started, st)
		}
		time.Sleep(5 * time.Second)
	}
	refreshCost(t, took)
}

// flip commits the default store's flip and watches the rollout: every
// pod's ConfigMap exists while the pod does; after the sync the previous
// hashed copies are gone (PruneLast: pruned once the waves are healthy).
func (a *argoApp) flip(t *testing.T) {
	oldPods := a.s.apiPods(t)
	old := map[string]bool{}
	for _, p := range oldPods {
		old[mountedConfigMap(p)] = true
	}
	flipDefault(t, filepath.Join(a.s.dir, "glance.yaml"))
	defer hold(rolloutSlots)()
	began := a.commit(t, "flip the default store")
	var missing []string
	testenv.Eventually(t, 10*time.Minute, 300*time.Millisecond, "the flip synced", func() error {
		missing = append(missing, a.s.missingConfigMaps(t)...)
		return a.synced(t)
	})
	gitopsBench.record("Argo CD", a.s.rel.name, "default flip", time.Since(began))
	if len(missing) > 0 {
		t.Errorf("a pod's ConfigMap was gone while the pod ran: %v", missing[:min(5, len(missing))])
	}
	for cm := range old {
		if _, err := a.s.n.Client.CoreV1().ConfigMaps(a.s.ns).Get(context.Background(), cm, metav1.GetOptions{}); err == nil {
			t.Errorf("the previous ConfigMap %s was not pruned after the sync", cm)
		}
	}
	if err := a.s.rolledOut(0, oldPods); err != nil {
		t.Error(err)
	}
}

func readYAML(t *testing.T, path string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(readFile(t, path), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

// failingDBSync commits the Glance pointed at a database Secret with a
// wrong password: the db-sync Job of wave 0 fails, so Argo CD's operation
// fails before wave 1 and no pod is replaced; reverting recovers.
func (a *argoApp) failingDBSync(t *testing.T) {
	before := a.s.replicaSets(t)
	a.s.wrongDatabasePassword(t, true)
	a.commit(t, "a wrong database password")
	testenv.Eventually(t, 10*time.Minute, 2*time.Second, "the sync of "+a.sha+" failed", func() error {
		st, err := a.status(t)
		if err != nil {
			return err
		}
		// An attempt failed: the operation ends Failed, or retries
		// (examples/argocd/application.yaml: each retry takes the latest
		// commit, so the fix below is what the next attempt syncs).
		failed := st.phase == "Failed" || st.phase == "Error" || strings.Contains(st.message, "completed unsuccessfully")
		if st.revision != a.sha || !failed {
			return fmt.Errorf("%+v", st)
		}
		t.Logf("Argo CD: %s: %s", st.phase, st.message)
		return nil
	})
	a.s.sameReplicaSets(t, before)
	a.s.wrongDatabasePassword(t, false)
	defer hold(rolloutSlots)()
	a.commit(t, "the right database password again")
	a.waitSynced(t, 10*time.Minute)
	a.s.sameReplicaSets(t, before)
}

// upgrade commits the Glance at release to, under traffic
// (scenario.upgradeThrough).
func (a *argoApp) upgrade(to release) func(t *testing.T) {
	return func(t *testing.T) {
		a.s.upgradeThrough(t, &a.images, to, func(t *testing.T) time.Time { return a.commit(t, "upgrade to "+to.name) },
			func(t *testing.T) { a.waitSynced(t, 15*time.Minute) })
	}
}

// downgrade commits the Glance at the release before the one it runs: a
// kustomize build cannot know the schema's release, so Argo CD applies
// it (the db-sync of a release whose migrations are the same is a no-op,
// and the pods roll back), and health stops it: the controller refuses
// the path from status.installedRelease, the Glance is Stalled, and Argo
// CD's health check calls it Degraded with the controller's words.
func (a *argoApp) downgrade(t *testing.T) {
	from := a.s.rel.name
	i := slices.Index(upgradeChain, from)
	if i < 1 {
		t.Fatalf("no release before %s in %v", from, upgradeChain)
	}
	to := upgradeChain[i-1]
	defer hold(rolloutSlots)()
	a.s.upgradeTo(t, releaseIn(t, releases, to, a.s.rel.id))
	a.commit(t, "back to "+to)
	says := "goes down from " + from + " to " + to
	// Argo CD 3 keeps a resource's health out of the Application's status
	// (controller.resource.health.persist); the Application's health names
	// the resource that caused it, and the sync result carries the failed
	// resource's message.
	testenv.Eventually(t, 15*time.Minute, 2*time.Second, "Application glance Degraded by the Glance", func() error {
		u, err := a.s.resource(t, applications, "argocd", "glance")
		if err != nil {
			return err
		}
		health, _, _ := unstructured.NestedString(u.Object, "status", "health", "status")
		cause, _, _ := unstructured.NestedString(u.Object, "status", "health", "message")
		revision, _, _ := unstructured.NestedString(u.Object, "status", "operationState", "syncResult", "revision")
		results, _, _ := unstructured.NestedSlice(u.Object, "status", "operationState", "syncResult", "resources")
		if revision != a.sha || health != "Degraded" {
			return fmt.Errorf("health %s (%s) at %s", health, cause, revision)
		}
		for _, r := range results {
			m, _ := r.(map[string]any)
			if m["kind"] == "Glance" && strings.Contains(fmt.Sprint(m["message"]), says) {
				t.Logf("Argo CD: %s, %s; the Glance's sync result: %v", health, cause, m["message"])
				if !strings.Contains(cause, "Glance:"+a.s.ns+"/glance") {
					t.Logf("the Application's health names another Degraded resource first: %s", a.s.autoscalerState())
				}
				return nil
			}
		}
		// The Application's health names one cause: the first Degraded
		// resource in Argo CD's order, where an autoscaling/
		// HorizontalPodAutoscaler comes before the Glance. The rolled-back
		// pods have no metrics for a while, so the autoscaler can be
		// Degraded (FailedGetResourceMetric) beside the Glance; the sync
		// result above is then where Argo CD names the Glance. Between the
		// sync's retries (the Application retries a failed sync) the result
		// is the running attempt's, which has not reached the Glance's
		// health yet: the health check's words are then the Glance's
		// Stalled condition, which Argo CD's health reads, when the Glance
		// is the cause named.
		if !strings.Contains(cause, "Glance:"+a.s.ns+"/glance") {
			return fmt.Errorf("health %s (%s) at %s, the Glance neither the cause named nor in the sync result with %q", health, cause, revision, says)
		}
		if c := a.s.conditions(t, "glances", "glance")["Stalled"]; strings.Contains(c.Message, says) {
			t.Logf("Argo CD: %s, %s; the Glance's Stalled (its health message): %s", health, cause, c.Message)
			return nil
		}
		return fmt.Errorf("health %s (%s) at %s, no word of %q yet", health, cause, revision, says)
	})
	c := a.s.conditions(t, "glances", "glance")["Stalled"]
	if c.Status != metav1.ConditionTrue || c.Reason != "DowngradeNotSupported" {
		t.Errorf("the Glance's Stalled is %+v, want True with DowngradeNotSupported", c)
	}
}
