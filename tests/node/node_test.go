//go:build e2e

// Package node_test runs what glance-krm generates on a real node
// (internal/testenv/node: kubelet, containerd, kube-proxy, CoreDNS,
// metrics-server), for every release in krm/catalogs: examples/node
// rendered by the real kustomize with the function, applied with
// kubectl, served through its Service, rolled, stopped and starved of a
// credential. Run it with `make e2e-node`.
package node_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/c5c3/glance-krm/internal/testenv"
	"github.com/c5c3/glance-krm/internal/testenv/node"
)

// TestMain prints, after the run, a line per release and a total of the
// named checks, as the chroot matrix does.
func TestMain(m *testing.M) { tally.Main(m) }

// TestNode is the whole scenario, on one node enforcing NetworkPolicies
// (kube-router): the plain-kubectl door for the releases no engine runs,
// the store drain behind Keystone, and Argo CD and Flux each syncing a
// Glance of its own from commits, all side by side in their namespaces
// (docs/proven.md says which part covers which release).
func TestNode(t *testing.T) {
	assets := node.FindAssets(t)
	tools := findGitopsTools(t)
	kustomize := testenv.Kustomize(t)
	fnBin := testenv.FunctionBinary(t)
	only := strings.Split(os.Getenv("GLANCE_KRM_NODE_ONLY"), ",") // a debugging aid: some parts only
	runs := func(part string) bool { return only[0] == "" || slices.Contains(only, part) }

	// Every release's image: the kubectl door's, the drain's and the
	// engines' (Argo CD's Glance goes through all of upgradeChain).
	all := slices.Clone(releases)
	for i := range all {
		all[i].rootfs = testenv.Env(t, all[i].env, "make e2e-node")
	}
	var door []release
	for _, r := range all {
		if slices.Contains(kubectlReleases, r.name) && runs(r.name) {
			door = append(door, r)
		}
	}
	var drain []release
	if runs("drain") {
		drain = append(drain, drainVariant(releaseIn(t, all, drainRelease, "")))
	}
	var engines []release // Argo CD's first, then Flux's
	if runs("argocd") {
		engines = append(engines, releaseIn(t, all, upgradeChain[0], "argocd"))
	}
	if runs("flux") {
		engines = append(engines, releaseIn(t, all, fluxRelease, "flux"))
	}
	var chain []release
	for _, name := range upgradeChain[1:] {
		chain = append(chain, releaseIn(t, all, name, "argocd"))
	}

	start := time.Now()
	archives, infra := buildImages(t, all)
	// Keystone for the drain's Glance and Flux's, whose store drain runs
	// as the service user.
	needKeystone := len(drain) > 0 || runs("flux")
	var keystone string
	if needKeystone {
		var archive string
		keystone, archive = keystoneImage(t)
		archives = append(archives, archive)
	}
	archives = append(archives, argoImages(t, tools)...)
	archives = append(archives, fluxImages(t, tools)...)
	bench.images = time.Since(start)

	n := node.StartWith(t, assets, node.Options{KubeRouter: node.FindKubeRouter(t)})
	bench.nodeReady = n.Ready
	start = time.Now()
	if err := n.Import(archives...); err != nil {
		t.Fatal(err)
	}
	bench.imported = time.Since(start)
	ours.fn, ours.controller = pushOurs(t, n, "fn"), pushOurs(t, n, "controller")
	if runs("argocd") {
		ours.cmp = pushOurs(t, n, "argocd-cmp")
	}

	glances := slices.Concat(door, drain, engines)
	dbs := map[string]string{}
	for _, r := range glances {
		dbs[database(r)] = dbUser
	}
	installInfra(t, n, infra, dbs, dbPassword)
	s3 := s3Client(t, n)
	for _, r := range glances {
		makeBuckets(t, s3, bucket(r, 1), bucket(r, 2))
	}
	var ks *testenv.Keystone
	if needKeystone {
		ks = installKeystone(t, n, keystone, servicePassword)
	}
	installCRDs(t, n, len(engines) > 0)
	installController(t, n, kustomize, ours.controller)
	if err := n.InstallMetricsServer(node.Cache()); err != nil {
		t.Fatal(err)
	}
	if slices.ContainsFunc(door, func(r release) bool { return r.name == defaultsRelease }) {
		installVPARecommender(t, n)
	}
	var repo *gitRepo
	if runs("argocd") {
		repo = newGitRepo(t)
		installArgoCD(t, n, tools, repo, ours.cmp)
	}
	if runs("flux") {
		installFlux(t, n, tools)
	}
	gitopsBench.memory = n.Memory()
	scenarioOf := func(t *testing.T, r release) *scenario {
		return &scenario{t: t, n: n, rel: r, s3: s3, kustomize: kustomize, fnBin: fnBin}
	}
	t.Run("releases", func(t *testing.T) {
		for _, r := range door {
			t.Run(r.name, func(t *testing.T) {
				t.Parallel()
				scenarioOf(t, r).run()
			})
		}
		for _, r := range drain {
			t.Run(r.name+"-drain", func(t *testing.T) {
				t.Parallel()
				s := scenarioOf(t, r)
				s.keystone = ks
				s.runDrain()
			})
		}
		for _, r := range engines {
			t.Run(r.id, func(t *testing.T) {
				t.Parallel()
				s := scenarioOf(t, r)
				s.ns = namespace(r)
				s.glance = &glanceClient{url: "http://glance." + s.ns + ".svc:9292", http: n.HTTPClient(5 * time.Minute)}
				if r.id == "flux" {
					s.keystone = ks
					s.glance.token = ks.Token(t, "admin", keystoneAdminPassword, "admin")
				}
				if r.id == "argocd" {
					runArgo(t, s, repo, chain)
				} else {
					runFlux(t, s)
				}
			})
		}
	})
	bench.memory = n.Memory()
	if out := os.Getenv("GLANCE_KRM_NODE_BENCH"); out != "" {
		if err := bench.write(out, door); err != nil {
			t.Error(err)
		}
	}
	t.Logf("the engines' figures:\n%s", gitopsBench)
}

// installCRDs applies glance-krm's CRDs and, for the engines' Glances,
// which carry an HTTPRoute, Gateway API's HTTPRoute CRD (from the module
// go.mod requires).
func installCRDs(t *testing.T, n *node.Node, gateway bool) {
	t.Helper()
	if _, err := n.Kubectl(nil, "apply", "--server-side", "-f", filepath.Join(testenv.RepoRoot(), "krm", "crds")); err != nil {
		t.Fatal(err)
	}
	if !gateway {
		return
	}
	crd, err := testenv.GatewayAPICRD()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := n.Kubectl(nil, "apply", "--server-side", "-f", crd); err != nil {
		t.Fatal(err)
	}
}

// kubectlReleases are the releases the plain-kubectl door runs: the one
// no engine's Glance does (2022.2), and one under uWSGI (2026.2), whose
// graceful stop, disabled store and credential rotation the engines'
// rollouts do not measure. 2026.1 runs the kubectl steps as the drain's
// Glance and is upgraded through by Argo CD, so a third door of its own
// would only add a Glance to a two-core node.
var kubectlReleases = []string{"2022.2", "2026.2"}

// releaseIn is the release of that name, its Glance named id (its
// namespace, database and buckets) when id is not empty.
func releaseIn(t *testing.T, rels []release, name, id string) release {
	t.Helper()
	for _, r := range rels {
		if r.name == name {
			if id != "" {
				r.id = id
			}
			return r
		}
	}
	t.Fatalf("no release %s", name)
	return release{}
}

// The database account every release's Glance uses (credentials.yaml).
const dbUser, dbPassword = "glance-node", ` db$pa%ss @:/?#[]'"\ word `

func dashed(r release) string {
	if r.id != "" {
		return r.id
	}
	return strings.ReplaceAll(r.name, ".", "-")
}
func namespace(r release) string { return "glance-" + dashed(r) }
func database(r release) string  { return "glance_" + strings.ReplaceAll(dashed(r), "-", "_") }
func bucket(r release, i int) string {
	return fmt.Sprintf("glance-%s-%d", dashed(r), i)
}

// installController deploys the runtime controller as users install it:
// kustomize build controller/config, with its image pinned by digest by an
// overlay, applied with kubectl (its generated RBAC, leader election).
func installController(t *testing.T, n *node.Node, kustomize, ref string) {
	t.Helper()
	dir := t.TempDir()
	testenv.CopyTree(t, filepath.Join(testenv.RepoRoot(), "controller", "config"), filepath.Join(dir, "base"), nil)
	name, digest, _ := strings.Cut(ref, "@")
	overlay := fmt.Sprintf("resources: [base]\nimages:\n- name: glance-krm-controller\n  newName: %s\n  digest: %s\n", name, digest)
	if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(overlay), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(kustomize, "build", dir).Output()
	if err != nil {
		t.Fatalf("kustomize build controller/config: %v", err)
	}
	if err := n.Apply(string(out)); err != nil {
		t.Fatal(err)
	}
	if err := n.WaitAvailable("glance-krm-system", "glance-krm-controller", 3*time.Minute); err != nil {
		t.Fatal(err)
	}
	pulledByDigest(t, n, "glance-krm-system", "app.kubernetes.io/name=glance-krm-controller", "controller", ref)
}

// tally counts the named checks per release (and engine).
var tally testenv.Tally

func build(t *testing.T, kustomize, dir string) []byte {
	t.Helper()
	var stderr bytes.Buffer
	cmd := exec.Command(kustomize, "build", "--enable-alpha-plugins", "--enable-exec", dir)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("kustomize build %s: %v\n%s", dir, err, stderr.String())
	}
	return out
}

func withTimeout(d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), d)
}
