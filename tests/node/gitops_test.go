//go:build e2e

package node_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
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

// The GitOps engines' part of TestNode: Argo CD and Flux, each installed
// from its upstream manifests, sync glance-krm's output from commits the
// test makes, with a client looping through the Service from the first
// Available to the end.

// fluxRelease is the release Flux's Glance runs; Argo CD's goes through
// upgradeChain (docs/proven.md says which engine covers which release).
const fluxRelease = "2025.2"

// gitopsTools is what hack/gitops-assets.sh provides: the engines'
// binaries and their upstream install manifests.
type gitopsTools struct {
	dir    string
	rootfs string // GLANCE_ROOTFS_GITOPS: Debian's git and redis-server
}

func findGitopsTools(t *testing.T) gitopsTools {
	return gitopsTools{
		dir:    testenv.Env(t, node.GitOpsAssetsEnv, "make e2e-node"),
		rootfs: testenv.Env(t, "GLANCE_ROOTFS_GITOPS", "make e2e-node"),
	}
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
	// The engines' images are imported (no upstream registry is reachable
	// from the node; only glance-krm's are in the node's own), and a pull
	// upstream's manifests ask for Always would fail.
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
