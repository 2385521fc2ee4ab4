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

// floorApps are two more Applications holding the Glance's objects as
// rendered (other repositories and namespaces, so they never touch the
// same object), only compared, never synced: the floors the refresh cost
// is measured against. glance-plain reads them as a plain directory (no
// plugin); glance-floor through the same plugin sidecar and kustomize,
// without the function (the discovery file beside, unused), so the ratio
// against it is what the function itself costs. It returns a func that
// deletes them.
func (a *argoApp) floorApps(t *testing.T) func() {
	t.Helper()
	objects := string(build(t, a.s.kustomize, a.s.dir))
	floors := map[string]map[string][]byte{
		"plain": {"objects.yaml": nil},
		"floor": {"objects.yaml": nil, "glance-krm.yaml": []byte("# the plugin's discovery file; kustomization.yaml does not run it\n"),
			"kustomization.yaml": []byte("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - objects.yaml\n")},
	}
	var apps []string
	for name, files := range floors {
		ns := a.s.ns + "-" + name
		files["objects.yaml"] = []byte(strings.ReplaceAll(objects, "namespace: "+a.s.ns+"\n", "namespace: "+ns+"\n"))
		repo := a.repo.sibling(t, name)
		repo.commit(t, name, files, "the Glance's objects, rendered")
		source := fmt.Sprintf(`{repoURL: "file:///git/%s.git", targetRevision: main, path: %s}`, name, name)
		if name == "floor" {
			source = fmt.Sprintf(`{repoURL: "file:///git/%s.git", targetRevision: main, path: %s, plugin: {name: glance-krm-v1}}`, name, name)
		}
		app := fmt.Sprintf(`apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: glance-%s, namespace: argocd}
spec:
  project: default
  source: %s
  destination: {server: "https://kubernetes.default.svc", namespace: %s}
`, name, source, ns)
		if err := a.s.n.Apply(app); err != nil {
			t.Fatal(err)
		}
		apps = append(apps, "glance-"+name)
	}
	return func() {
		if _, err := a.s.n.Kubectl(nil, append([]string{"-n", "argocd", "delete", "application", "--wait=false"}, apps...)...); err != nil {
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

// refreshCost records the median time per hard refresh of each, as
// ratios: what the function costs Argo CD's plugin door (goal ≤ 1.5×),
// and what the door and the function cost against plain YAML.
func refreshCost(t *testing.T, took map[string][]int) {
	with, floor, plain := median(took["glance"]), median(took["glance-floor"]), median(took["glance-plain"])
	ratio := func(a, b int) float64 { return float64(a) / float64(max(b, 1)) }
	t.Logf("manifests per hard refresh (git_ms, medians of %d, %d and %d): %d ms through the plugin with the function, %d ms through the plugin without it: %.2f× (goal ≤ 1.5×); %d ms as plain YAML: %.2f×; all: %v",
		len(took["glance"]), len(took["glance-floor"]), len(took["glance-plain"]), with, floor, ratio(with, floor), plain, ratio(with, plain), took)
	gitopsBench.add(fmt.Sprintf("Argo CD, manifests per hard refresh (median of %d): %d ms through the plugin sidecar with the function, %d ms without it (%.2f×), %d ms for the same objects as plain YAML (%.2f×)",
		len(took["glance"]), with, floor, ratio(with, floor), plain, ratio(with, plain)))
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
