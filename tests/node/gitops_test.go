//go:build e2e

package node_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/c5c3/glance-krm/internal/testenv"
	"github.com/c5c3/glance-krm/internal/testenv/node"
)

// The GitOps engines' scenarios (make e2e-gitops): Argo CD and Flux, each
// installed from its upstream manifests on a node of its own, sync
// glance-krm's output from commits the test makes, with a client looping
// through the Service from the first Available to the end.

// fluxRelease is the release Flux's Glance runs; Argo CD's goes through
// upgradeChain (docs/proven.md says which engine covers which release).
const fluxRelease = "2025.2"

const cmpImage = "ghcr.io/c5c3/glance-krm-argocd-cmp:dev"

// gitopsTools is what hack/gitops-assets.sh provides: the engines'
// binaries and their upstream install manifests.
type gitopsTools struct {
	dir    string
	rootfs string // GLANCE_ROOTFS_GITOPS: Debian's git and redis-server
}

func findGitopsTools(t *testing.T) gitopsTools {
	return gitopsTools{
		dir:    testenv.Env(t, node.GitOpsAssetsEnv, "make e2e-gitops"),
		rootfs: testenv.Env(t, "GLANCE_ROOTFS_GITOPS", "make e2e-gitops"),
	}
}

// TestGitOps is the engines' whole scenario: one node running both, each
// syncing a Glance of its own, one after the other (the node has two
// cores).
func TestGitOps(t *testing.T) {
	tools := findGitopsTools(t)
	argo, flux := releaseNamed(t, upgradeChain[0], "argocd"), releaseNamed(t, fluxRelease, "flux")
	var chain []release
	for _, name := range upgradeChain[1:] {
		chain = append(chain, releaseNamed(t, name, "argocd"))
	}
	n, scenarios := engineNode(t, []release{argo, flux}, chain, func(t *testing.T) []string {
		return append(argoImages(t, tools), fluxImages(t, tools)...)
	})
	repo := newGitRepo(t)
	installArgoCD(t, n, tools, repo)
	installFlux(t, n, tools)
	gitopsBench.memory = n.Memory()
	t.Run("argocd", func(t *testing.T) { runArgo(t, scenarios[0], repo, chain) })
	t.Run("flux", func(t *testing.T) { runFlux(t, scenarios[1]) })
	t.Logf("the engines' figures:\n%s", gitopsBench)
}

// engineNode starts a node with what every engine's scenario needs: the
// releases' glance images (and those of the releases they upgrade to), the infrastructure, glance-krm's CRDs and its
// controller, metrics-server, and the engines' own images; a scenario per
// release, its namespace not created yet.
func engineNode(t *testing.T, rels, later []release, engineImages func(*testing.T) []string) (*node.Node, []*scenario) {
	t.Helper()
	assets := node.FindAssets(t)
	images := append(slices.Clone(rels), later...)
	for i := range images {
		images[i].rootfs = testenv.Env(t, images[i].env, "make e2e-gitops")
	}
	archives, infra := buildImages(t, images)
	archives = append(archives, engineImages(t)...)
	n := node.Start(t, assets)
	if err := n.Import(archives...); err != nil {
		t.Fatal(err)
	}
	dbs := map[string]string{}
	for _, r := range rels {
		dbs[database(r)] = dbUser
	}
	installInfra(t, n, infra, dbs, dbPassword)
	s3 := s3Client(t, n)
	for _, r := range rels {
		makeBuckets(t, s3, bucket(r, 1), bucket(r, 2))
	}
	if _, err := n.Kubectl(nil, "apply", "--server-side", "-f", filepath.Join(testenv.RepoRoot(), "krm", "crds")); err != nil {
		t.Fatal(err)
	}
	kustomize := testenv.Kustomize(t)
	installController(t, n, kustomize)
	if err := n.InstallMetricsServer(node.Cache()); err != nil {
		t.Fatal(err)
	}
	var out []*scenario
	for _, r := range rels {
		s := &scenario{t: t, n: n, rel: r, s3: s3, kustomize: kustomize, fnBin: testenv.FunctionBinary(t)}
		s.ns = namespace(r)
		s.glance = &glanceClient{url: "http://glance." + s.ns + ".svc:9292", http: n.HTTPClient(5 * time.Minute)}
		out = append(out, s)
	}
	return n, out
}

// releaseNamed is the release of krm/catalogs of that name, its Glance
// named after the engine that runs it.
func releaseNamed(t *testing.T, name, engine string) release {
	for _, r := range releases {
		if r.name == name {
			r.id = engine
			return r
		}
	}
	t.Fatalf("no release %s", name)
	return release{}
}

// installManifests builds a folder of tests/node/testdata (with files
// copied in beside it and placeholders replaced) with the real kustomize
// and applies it, the CRDs first.
func installManifests(t *testing.T, n *node.Node, folder string, extra map[string]string, replace *strings.Replacer) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), folder)
	testenv.CopyTree(t, filepath.Join(testenv.RepoRoot(), "tests", "node", "testdata", folder), dir, func(_ string, b []byte) []byte {
		return []byte(replace.Replace(string(b)))
	})
	for to, from := range extra {
		cp := exec.Command("cp", "-r", from, filepath.Join(dir, to))
		if out, err := cp.CombinedOutput(); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
	}
	if out, err := exec.Command("chmod", "-R", "u+w", dir).CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	out, err := exec.Command(testenv.Kustomize(t), "build", dir).Output()
	if err != nil {
		t.Fatalf("kustomize build %s: %v", folder, err)
	}
	// No registry is reachable from the node: every image is imported,
	// and a pull upstream's manifests ask for Always would fail.
	manifests := strings.ReplaceAll(string(out), "imagePullPolicy: Always", "imagePullPolicy: IfNotPresent")
	// An object of a kind its CRD defines is refused until the CRD is
	// established: apply again until everything is accepted.
	testenv.Eventually(t, time.Minute, 2*time.Second, "applying "+folder, func() error {
		return n.Apply(manifests)
	})
}

// binaryImageOf is an image holding one static program of the engines as
// its entrypoint, run as nobody.
func binaryImageOf(t *testing.T, tools gitopsTools, name string) (ref, archive string) {
	t.Helper()
	bin := filepath.Join(tools.dir, name)
	key, err := fileKey(bin)
	if err != nil {
		t.Fatal(err)
	}
	ref = "localhost/glance-krm-node/" + name + ":" + key
	archive = node.ArchiveName(node.Cache(), name, key)
	path := "/usr/local/bin/" + name
	if err := node.BuildArchive(archive, node.Image{Ref: ref, Files: map[string]node.File{path: {From: bin, Mode: 0o755}},
		Entrypoint: []string{path}, User: "65534:65534"}); err != nil {
		t.Fatal(err)
	}
	return ref, archive
}

// resource reads one object of any kind, with the scenario's one dynamic
// client (the engines' checks poll every few hundred milliseconds).
func (s *scenario) resource(t *testing.T, gvr schema.GroupVersionResource, namespace, name string) (*unstructured.Unstructured, error) {
	t.Helper()
	if s.dyn == nil {
		dyn, err := dynamic.NewForConfig(s.n.Config)
		if err != nil {
			t.Fatal(err)
		}
		s.dyn = dyn
	}
	return s.dyn.Resource(gvr).Namespace(namespace).Get(context.Background(), name, metav1.GetOptions{})
}

// splitRef is an image reference's name and tag, as kustomize's images
// field takes them.
func splitRef(ref string) (name, tag string) {
	i := strings.LastIndex(ref, ":")
	return ref[:i], ref[i+1:]
}

// writeFile writes a file, its folders too.
func writeFile(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
