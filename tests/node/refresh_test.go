//go:build e2e

package node_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/c5c3/glance-krm/internal/testenv"
)

// reconciled is the application controller's log of one comparison (a
// JSON line, core-install's log format), with what getting the manifests
// took: git_ms, the repo-server's answer, the plugin sidecar's run
// included.
type reconciled struct {
	Msg         string `json:"msg"`
	Application string `json:"application"`
	Level       int    `json:"comparison-level"`
	GitMS       int    `json:"git_ms"`
}

// plainApp is a second Application holding the Glance's objects as plain
// YAML (another repository and namespace, so the two never touch the same
// object), only compared, never synced: the floor the refresh cost is
// measured against. It returns a func that deletes it.
func (a *argoApp) plainApp(t *testing.T) func() {
	t.Helper()
	plainNS := a.s.ns + "-plain"
	objects := strings.ReplaceAll(string(build(t, a.s.kustomize, a.s.dir)), "namespace: "+a.s.ns+"\n", "namespace: "+plainNS+"\n")
	plain := a.repo.sibling(t, "plain")
	plain.commit(t, "plain", map[string][]byte{"objects.yaml": []byte(objects)}, "the Glance's objects as plain YAML")
	app := fmt.Sprintf(`apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: glance-plain, namespace: argocd}
spec:
  project: default
  source: {repoURL: "file:///git/plain.git", targetRevision: main, path: plain}
  destination: {server: "https://kubernetes.default.svc", namespace: %s}
`, plainNS)
	if err := a.s.n.Apply(app); err != nil {
		t.Fatal(err)
	}
	return func() {
		if _, err := a.s.n.Kubectl(nil, "-n", "argocd", "delete", "application", "glance-plain", "--wait=false"); err != nil {
			t.Error(err)
		}
	}
}

// hardRefresh asks Argo CD to compare the Application again with nothing
// cached (the plugin renders again) and returns what getting its
// manifests took, as the controller logged it.
func (a *argoApp) hardRefresh(t *testing.T, name string, since time.Time) int {
	t.Helper()
	seen := len(a.hardComparisons(t, name, since))
	if _, err := a.s.n.Kubectl(nil, "-n", "argocd", "annotate", "--overwrite", "application", name, "argocd.argoproj.io/refresh=hard"); err != nil {
		t.Fatal(err)
	}
	var ms int
	testenv.Eventually(t, 3*time.Minute, 300*time.Millisecond, "a hard refresh of "+name+" logged", func() error {
		if all := a.hardComparisons(t, name, since); len(all) > seen {
			ms = all[len(all)-1]
			return nil
		}
		return fmt.Errorf("no new hard comparison of %s logged", name)
	})
	return ms
}

// refreshCost records the median time per hard refresh of each, as a
// ratio: what the function costs Argo CD (goal ≤ 1.5×).
func refreshCost(t *testing.T, took map[string][]int) {
	with, without := median(took["glance"]), median(took["glance-plain"])
	ratio := float64(with) / float64(max(without, 1))
	t.Logf("manifests per hard refresh (git_ms, median of %d and %d): %d ms through the plugin, %d ms as plain YAML: %.2f× (goal ≤ 1.5×); all: %v",
		len(took["glance"]), len(took["glance-plain"]), with, without, ratio, took)
	gitopsBench.add(fmt.Sprintf("Argo CD, manifests per hard refresh (median of %d): %d ms through the plugin sidecar, %d ms for the same objects as plain YAML, %.2f×",
		len(took["glance"]), with, without, ratio))
}

// hardComparisons are the git_ms of the controller's logged comparisons
// of the Application at level 3 (CompareWithLatestForceResolve: a
// requested refresh) since then, oldest first.
func (a *argoApp) hardComparisons(t *testing.T, name string, since time.Time) []int {
	t.Helper()
	out, err := a.s.n.Kubectl(nil, "-n", "argocd", "logs", "argocd-application-controller-0", "--since-time="+since.UTC().Format(time.RFC3339))
	if err != nil {
		t.Fatal(err)
	}
	var ms []int
	for _, line := range strings.Split(string(out), "\n") {
		var r reconciled
		if json.Unmarshal([]byte(line), &r) == nil && r.Msg == "Reconciliation completed" && r.Application == name && r.Level == 3 {
			ms = append(ms, r.GitMS)
		}
	}
	return ms
}

func median(xs []int) int {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(xs))
	return s[len(s)/2]
}
