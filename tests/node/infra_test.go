//go:build e2e

package node_test

import (
	"context"
	_ "embed"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/c5c3/glance-krm/internal/testenv"
	"github.com/c5c3/glance-krm/internal/testenv/node"
)

// release is one Glance the node runs: its image is a root file system of
// tests/e2e/glance/rootfs.sh (GLANCE_ROOTFS_<NAME>, set by make).
type release struct {
	name    string // the openStackRelease, e.g. 2025.2
	id      string // its Glance's name on the node when not the release's (dashed)
	suite   string // where its glance comes from
	env     string
	uwsgi   bool
	rootfs  string
	image   string
	archive string
}

// releases are every release in krm/catalogs, oldest first.
var releases = []release{
	{name: "2022.2", suite: "Debian bookworm, glance 25.1.0", env: "GLANCE_ROOTFS_BOOKWORM"},
	{name: "2025.1", suite: "Debian trixie, glance 30.0.0", env: "GLANCE_ROOTFS_TRIXIE"},
	{name: "2025.2", suite: "glance 31.1.0 + glance_store 5.2.0 on trixie", env: "GLANCE_ROOTFS_2025_2"},
	{name: "2026.1", suite: "glance 32.0.0 + glance_store 5.4.0 on trixie, uWSGI", env: "GLANCE_ROOTFS_2026_1", uwsgi: true},
	{name: "2026.2", suite: "Debian sid, glance 33.0.0, uWSGI", env: "GLANCE_ROOTFS_SID", uwsgi: true},
}

const (
	glanceImage    = "localhost/glance-krm-node/glance"
	infraNamespace = "glance-infra"
	s3Region       = "us-east-1"
)

// buildImages makes each release's glance image and the infrastructure
// image (MariaDB, memcached and versitygw) from their root file systems,
// once per root file system (the cache keeps the archives), and saves the
// function and controller images podman built.
func buildImages(t *testing.T, rels []release) (archives []string, infra string) {
	t.Helper()
	cache := node.Cache()
	for i := range rels {
		r := &rels[i]
		r.image = glanceImage + ":" + r.name
		r.archive = node.ArchiveName(cache, "glance-"+r.name, filepath.Base(r.rootfs))
		if err := node.BuildArchive(r.archive, node.Image{Ref: r.image, Dir: r.rootfs, User: "42424:42424"}); err != nil {
			t.Fatal(err)
		}
		archives = append(archives, r.archive)
	}
	infraFS := testenv.Env(t, "GLANCE_ROOTFS_INFRA", "make e2e-node")
	vgw := testenv.Env(t, "VERSITYGW_BIN", "make e2e-node")
	key, err := fileKey(vgw)
	if err != nil {
		t.Fatal(err)
	}
	infra = "localhost/glance-krm-node/infra:" + key
	infraArchive := node.ArchiveName(cache, "infra", filepath.Base(infraFS)+"-"+key)
	if err := node.BuildArchive(infraArchive, node.Image{Ref: infra, Dir: infraFS,
		Files: map[string]node.File{"/usr/local/bin/versitygw": {From: vgw, Mode: 0o755}}}); err != nil {
		t.Fatal(err)
	}
	archives = append(archives, infraArchive)
	return archives, infra
}

// ours are glance-krm's own images as users get them: `make image`'s OCI
// indexes (both platforms), pushed to the node's registry and pulled by
// the kubelet by digest, as from ghcr.io. Set once, before the releases
// run.
var ours struct {
	fn         string // the credentials init container
	controller string
	cmp        string // Argo CD's plugin sidecar
}

// pushOurs pushes build/oci/<target> to the node's registry as
// c5c3/glance-krm-<target> and returns its reference by digest.
func pushOurs(t *testing.T, n *node.Node, target string) string {
	t.Helper()
	ref, err := n.PushIndex(filepath.Join(testenv.RepoRoot(), "build", "oci", target), "c5c3/glance-krm-"+target)
	if err != nil {
		t.Fatalf("%v (make image writes build/oci/%s)", err, target)
	}
	return ref
}

// pulledByDigest: every container named container of the pods selector
// finds runs ref as the kubelet pulled it from the node's registry (the
// image ID containerd reports is that reference by digest).
func pulledByDigest(t *testing.T, n *node.Node, ns, selector, container, ref string) {
	t.Helper()
	pods, err := n.Client.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, p := range pods.Items {
		for _, c := range slices.Concat(p.Status.InitContainerStatuses, p.Status.ContainerStatuses) {
			if c.Name != container {
				continue
			}
			found++
			if c.ImageID != ref {
				t.Errorf("pod %s/%s's %s runs %s (image ID %s), want %s pulled from the node's registry", ns, p.Name, container, c.Image, c.ImageID, ref)
			}
		}
	}
	if found == 0 {
		t.Errorf("no container %s in the pods %s of %s", container, selector, ns)
	}
}

func fileKey(path string) (string, error) {
	info, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%x-%x", info.Size(), info.ModTime().Unix()), nil
}

// s3Keys are the S3 server's one account, which every store's Secret
// holds (examples/node/credentials.yaml).
const s3Access, s3Secret = "glance-krm-node", ` node$secret%with"quote' and \ spaces`

// installInfra runs MariaDB (a database and user per release, from an
// init file), memcached and versitygw (the S3 server, posix backend) in
// their namespace, with Services, and waits for them.
func installInfra(t *testing.T, n *node.Node, image string, dbUsers map[string]string, dbPassword string) {
	t.Helper()
	var sql strings.Builder
	for db, user := range dbUsers {
		fmt.Fprintf(&sql, "CREATE DATABASE IF NOT EXISTS `%s`;\nCREATE USER IF NOT EXISTS '%s'@'%%' IDENTIFIED BY '%s';\nGRANT ALL ON `%s`.* TO '%s'@'%%';\n",
			db, user, sqlString(dbPassword), db, user)
	}
	sql.WriteString(keystoneSQL())
	manifests := strings.NewReplacer("INFRA_IMAGE", image, "S3_REGION", s3Region).Replace(infraManifests)
	if _, err := n.Kubectl(nil, "create", "namespace", infraNamespace); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string]map[string]string{
		"mariadb-init":   {"init.sql": sql.String()},
		"s3-credentials": {"access": s3Access, "secret": s3Secret},
	} {
		args := []string{"-n", infraNamespace, "create", "secret", "generic", name}
		for k, v := range data {
			args = append(args, "--from-literal="+k+"="+v)
		}
		if _, err := n.Kubectl(nil, args...); err != nil {
			t.Fatal(err)
		}
	}
	if err := n.Apply(manifests); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"mariadb", "memcached", "s3"} {
		if err := n.WaitAvailable(infraNamespace, d, 3*time.Minute); err != nil {
			t.Fatal(err)
		}
	}
}

func sqlString(s string) string {
	return strings.NewReplacer(`\`, `\\`, `'`, `''`).Replace(s)
}

// s3Client reaches versitygw through its Service, from inside the node.
func s3Client(t *testing.T, n *node.Node) *minio.Client {
	t.Helper()
	c, err := minio.New("s3."+infraNamespace+".svc:7070", &minio.Options{
		Creds: credentials.NewStaticV4(s3Access, s3Secret, ""), Region: s3Region,
		Transport: n.HTTPClient(0).Transport,
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func makeBuckets(t *testing.T, c *minio.Client, buckets ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, b := range buckets {
		for {
			err := c.MakeBucket(ctx, b, minio.MakeBucketOptions{Region: s3Region})
			if err == nil {
				break
			}
			if ctx.Err() != nil {
				t.Fatalf("creating bucket %s: %v", b, err)
			}
			time.Sleep(time.Second)
		}
	}
}

// infraManifests is what the Glances share in glance-infra: MariaDB,
// memcached and the S3 server (INFRA_IMAGE and S3_REGION replaced).
//
//go:embed testdata/infra/infra.yaml
var infraManifests string

// installVPARecommender runs the VerticalPodAutoscaler's recommender
// (hack/vpa-assets.sh built it from the module go.mod pins) with
// upstream's CRDs, RBAC and Deployment from that module.
func installVPARecommender(t *testing.T, n *node.Node) {
	t.Helper()
	binary := testenv.Env(t, "GLANCE_KRM_VPA_RECOMMENDER", "make e2e-node")
	var files []string
	for _, name := range []string{"vpa-v1-crd-gen.yaml", "vpa-rbac.yaml", "recommender-deployment.yaml"} {
		path, err := testenv.VPAManifest(name)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, string(readFile(t, path)))
	}
	if err := n.InstallVPARecommender(node.Cache(), binary, files[0], files[1], files[2]); err != nil {
		t.Fatal(err)
	}
}
