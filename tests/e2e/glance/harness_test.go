//go:build e2e

package glance_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/c5c3/glance-krm/internal/testenv"
	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

// tallies count the named checks per release (the key: the release's
// subtest of TestGlanceMultiStore; "" for checks that run on no Glance
// release, such as chainsaw's), so the run ends with one plain
// "N passed, M failed" line per release and a total. Releases run side
// by side, so the counts are guarded.
var (
	talliesMu sync.Mutex
	tallies   = map[string]*struct{ passed, failed int }{}
	order     []string
)

// check runs one named assertion as a subtest and counts it.
func check(t *testing.T, name string, f func(t *testing.T)) bool {
	ok := t.Run(name, f)
	release := ""
	if parts := strings.SplitN(t.Name(), "/", 3); len(parts) > 1 && parts[0] == "TestGlanceMultiStore" {
		release = parts[1]
	}
	talliesMu.Lock()
	defer talliesMu.Unlock()
	tl := tallies[release]
	if tl == nil {
		tl = &struct{ passed, failed int }{}
		tallies[release] = tl
		order = append(order, release)
	}
	if ok {
		tl.passed++
	} else {
		tl.failed++
	}
	return ok
}

// printTallies prints a line per release, then the total, and says
// whether anything failed.
func printTallies() bool {
	var passed, failed int
	for _, name := range order {
		tl := tallies[name]
		passed, failed = passed+tl.passed, failed+tl.failed
		if name != "" && len(order) > 1 {
			fmt.Printf("%s: %d passed, %d failed\n", name, tl.passed, tl.failed)
		}
	}
	label := ""
	if len(order) > 1 {
		label = "total: "
	}
	fmt.Printf("%s%d passed, %d failed\n", label, passed, failed)
	return failed > 0
}

// s3Server is versitygw with its posix backend on a temporary folder.
type s3Server struct {
	endpoint string
	client   *minio.Client
	// rekey restarts the server on the same data and port with only this
	// key pair: the old one is revoked.
	rekey func(t *testing.T, accessKey, secretKey string)
	// dir holds the buckets, one folder each (versitygw's posix backend).
	dir string
	// addUser makes one more key pair valid beside the server's own, with
	// every right on every bucket (versitygw's admin role); it stays valid
	// across rekey. Only on a server started with s3Options.iam.
	addUser func(t *testing.T, accessKey, secretKey string)
}

func startS3(t *testing.T, accessKey, secretKey string, buckets ...string) *s3Server {
	return startS3In(t, "us-east-1", "", accessKey, secretKey, buckets...)
}

// startS3In is startS3 for an S3 server of the given region (it refuses
// requests signed for another region) that, with a virtual domain, also
// serves <bucket>.<domain> (virtual-hosted style).
func startS3In(t *testing.T, region, virtualDomain, accessKey, secretKey string, buckets ...string) *s3Server {
	return startS3With(t, s3Options{region: region, virtualDomain: virtualDomain}, accessKey, secretKey, buckets...)
}

// s3Options shape a test S3 server.
type s3Options struct {
	region, virtualDomain string
	tls                   *testTLS // serve HTTPS with this certificate
	iam                   bool     // keep users beside the root pair (addUser)
}

func startS3With(t *testing.T, o s3Options, accessKey, secretKey string, buckets ...string) *s3Server {
	t.Helper()
	region, virtualDomain := o.region, o.virtualDomain
	bin := testenv.Env(t, "VERSITYGW_BIN", "make e2e-glance")
	root := t.TempDir()
	port := testenv.FreePort(t)
	endpoint := fmt.Sprintf("127.0.0.1:%d", port)
	args := []string{"--access", accessKey, "--secret", secretKey, "--region", region, "--port", endpoint, "--quiet"}
	if virtualDomain != "" {
		args = append(args, "--virtual-domain", virtualDomain)
	}
	if o.tls != nil {
		args = append(args, "--cert", o.tls.certFile, "--key", o.tls.keyFile)
	}
	if o.iam {
		args = append(args, "--iam-dir", t.TempDir())
	}
	log, err := os.Create(filepath.Join(t.TempDir(), "versitygw.log"))
	if err != nil {
		t.Fatal(err)
	}
	var cmd *exec.Cmd
	run := func(t *testing.T, args []string) {
		cmd = exec.Command(bin, append(args, "posix", root)...)
		cmd.Stdout, cmd.Stderr = log, log
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
	}
	run(t, args)
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	rekey := func(t *testing.T, accessKey, secretKey string) {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		args[1], args[3] = accessKey, secretKey // --access, --secret
		run(t, args)
		for deadline := time.Now().Add(30 * time.Second); ; {
			if c, err := net.Dial("tcp", endpoint); err == nil {
				_ = c.Close()
				return
			} else if time.Now().After(deadline) {
				t.Fatalf("versitygw did not come back on %s: %v", endpoint, err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}

	opts := &minio.Options{Creds: credentials.NewStaticV4(accessKey, secretKey, ""), Region: region}
	if o.tls != nil {
		opts.Secure, opts.Transport = true, o.tls.transport()
	}
	client, err := minio.New(endpoint, opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, b := range buckets {
		for {
			err := client.MakeBucket(ctx, b, minio.MakeBucketOptions{Region: region})
			if err == nil {
				break
			}
			if ctx.Err() != nil {
				t.Fatalf("versitygw on %s: creating bucket %s: %v", endpoint, b, err)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	s := &s3Server{endpoint: endpoint, client: client, rekey: rekey, dir: root}
	if o.iam {
		s.addUser = func(t *testing.T, access, secret string) {
			t.Helper()
			scheme := "http"
			if o.tls != nil {
				scheme = "https"
			}
			// The admin API answers to the pair the server runs with now.
			out, err := exec.Command(bin, "admin", "--access", args[1], "--secret", args[3], "--region", region,
				"--endpoint-url", scheme+"://"+endpoint, "--allow-insecure",
				"create-user", "--access", access, "--secret", secret, "--role", "admin").CombinedOutput()
			if err != nil {
				t.Fatalf("versitygw admin create-user: %v\n%s", err, out)
			}
		}
	}
	return s
}

// etag is an object's ETag: "<md5 of the part md5s>-<parts>" for a
// multipart upload.
func (s *s3Server) etag(t *testing.T, bucket, key string) string {
	t.Helper()
	info, err := s.client.StatObject(context.Background(), bucket, key, minio.StatObjectOptions{})
	if err != nil {
		t.Fatalf("stat %s/%s: %v", bucket, key, err)
	}
	return info.ETag
}

func (s *s3Server) has(t *testing.T, bucket, key string) bool {
	t.Helper()
	for obj := range s.client.ListObjects(context.Background(), bucket, minio.ListObjectsOptions{}) {
		if obj.Err != nil {
			t.Fatalf("listing %s: %v", bucket, obj.Err)
		}
		if obj.Key == key {
			return true
		}
	}
	return false
}

// build is the real kustomize with the real function on a directory.
func build(t *testing.T, dir string) []*yaml.RNode {
	t.Helper()
	return testenv.MustBuild(t, dir)
}

func readObjects(t *testing.T, file string) []*yaml.RNode {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	nodes, err := (&kio.ByteReader{Reader: bytes.NewReader(b)}).Read()
	if err != nil {
		t.Fatal(err)
	}
	return nodes
}

func lookup(t *testing.T, n *yaml.RNode, path ...string) *yaml.RNode {
	t.Helper()
	v, err := n.Pipe(yaml.Lookup(path...))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func value(t *testing.T, n *yaml.RNode, path ...string) string {
	t.Helper()
	if v := lookup(t, n, path...); v != nil {
		return v.YNode().Value
	}
	return ""
}

// rendering is what one build produced, laid out under root as the
// Deployment mounts it.
type rendering struct {
	rel               release
	hosts             string // an /etc/hosts for the pod, or ""
	root              string
	configMap, secret string
	apiConf, backends string // the files, each in its mounted directory
	pod, container    *yaml.RNode
	// credentialMounts are where the container mounts the credentials
	// volume (more than one place where glance reads another directory).
	credentialMounts []string
	// drainScript and drainJob: a store drain's script and Job, when a
	// GlanceBackend asks for one.
	drainScript string
	drainJob    *yaml.RNode
}

// render builds the example and writes glance-api.conf and backends.conf
// where the Deployment's volumes would put them (under root), exactly as
// rendered.
func render(t *testing.T, rel release, example, root string) rendering {
	t.Helper()
	r := rendering{rel: rel, root: root}
	var deployment *yaml.RNode
	for _, n := range build(t, example) {
		switch component := n.GetLabels()[v1alpha1.LabelComponent]; {
		case n.GetKind() == "ConfigMap" && component == v1alpha1.ComponentConfig:
			r.configMap = n.GetName()
			// Every file of the ConfigMap, as the kubelet projects it.
			for k, v := range n.GetDataMap() {
				write(t, filepath.Join(root, v1alpha1.MountConfigDir, k), v)
			}
			r.apiConf = filepath.Join(root, v1alpha1.MountConfigDir, v1alpha1.KeyGlanceAPIConf)
		case n.GetKind() == "Secret" && component == v1alpha1.ComponentBackends:
			r.secret = n.GetName()
			r.backends = write(t, filepath.Join(root, v1alpha1.MountConfigDir, v1alpha1.KeyBackendsConf), value(t, n, "stringData", v1alpha1.KeyBackendsConf))
		case n.GetKind() == "Deployment":
			deployment = n
		case n.GetKind() == "ConfigMap" && n.GetDataMap()["drain.py"] != "":
			r.drainScript = n.GetDataMap()["drain.py"]
		case n.GetKind() == "Job" && n.GetLabels()["app.kubernetes.io/component"] == "store-drain":
			r.drainJob = n
		}
	}
	if r.configMap == "" || r.secret == "" || deployment == nil {
		t.Fatalf("the build lacks the ConfigMap, the Secret or the Deployment: %+v", r)
	}
	r.pod = lookup(t, deployment, "spec", "template", "spec")
	// One projected volume holds both rendered files.
	var mountsCM, mountsSecret string
	sources, err := lookup(t, r.pod, "volumes", "[name="+v1alpha1.VolumeConfig+"]", "projected", "sources").Elements()
	if err != nil {
		t.Fatal(err)
	}
	for _, src := range sources {
		if v := value(t, src, "configMap", "name"); v != "" {
			mountsCM = v
		}
		if v := value(t, src, "secret", "name"); v != "" && mountsSecret == "" {
			mountsSecret = v // the rendered Secret comes first; CA bundles follow
		}
	}
	if mountsCM != r.configMap || mountsSecret != r.secret {
		t.Fatalf("the Deployment mounts %s and %s, the build rendered %s and %s", mountsCM, mountsSecret, r.configMap, r.secret)
	}
	r.container = lookup(t, r.pod, "containers", "[name=glance-api]")
	mounts, _ := lookup(t, r.container, "volumeMounts").Elements()
	for _, m := range mounts {
		if value(t, m, "name") == v1alpha1.VolumeCredentials {
			r.credentialMounts = append(r.credentialMounts, value(t, m, "mountPath"))
		}
	}
	return r
}

func write(t *testing.T, path, content string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// secretData is each Secret's data, decoded, by name.
func secretData(t *testing.T, secrets []*yaml.RNode) map[string]map[string]string {
	t.Helper()
	data := map[string]map[string]string{}
	for _, s := range secrets {
		m := map[string]string{}
		for k, v := range s.GetDataMap() {
			b, err := base64.StdEncoding.DecodeString(v)
			if err != nil {
				t.Fatal(err)
			}
			m[k] = string(b)
		}
		if sd := lookup(t, s, "stringData"); sd != nil {
			_ = sd.VisitFields(func(f *yaml.MapNode) error {
				m[f.Key.YNode().Value] = f.Value.YNode().Value
				return nil
			})
		}
		data[s.GetName()] = m
	}
	return data
}

// startPod does what the kubelet does before glance-api starts: it lays
// out the projected credentials volume from the Secrets the cluster holds
// (an absent optional Secret or key is skipped; an absent required one
// keeps the pod from starting), then runs the rendered init container,
// with its own arguments, on the function binary. It returns the
// init container's log.
func startPod(t *testing.T, r rendering, secrets []*yaml.RNode) string {
	t.Helper()
	data := secretData(t, secrets)
	in := filepath.Join(r.root, v1alpha1.MountCredentialsIn)
	sources, err := lookup(t, r.pod, "volumes", "[name="+v1alpha1.VolumeCredentialsIn+"]", "projected", "sources").Elements()
	if err != nil {
		t.Fatal(err)
	}
	for _, src := range sources {
		name, optional := value(t, src, "secret", "name"), value(t, src, "secret", "optional") == "true"
		secret, ok := data[name]
		if !ok && !optional {
			t.Fatalf("Secret %s is missing and not optional: the kubelet would not start the pod", name)
		}
		items, _ := lookup(t, src, "secret", "items").Elements()
		for _, item := range items {
			v, ok := secret[value(t, item, "key")]
			if !ok {
				if !optional && secret != nil {
					t.Fatalf("Secret %s has no key %s and is not optional", name, value(t, item, "key"))
				}
				continue
			}
			write(t, filepath.Join(in, value(t, item, "path")), v)
		}
	}
	// The config volume's other sources: each store's CA bundle, from the
	// Secret it names.
	cfg, err := lookup(t, r.pod, "volumes", "[name="+v1alpha1.VolumeConfig+"]", "projected", "sources").Elements()
	if err != nil {
		t.Fatal(err)
	}
	for _, src := range cfg {
		items := lookup(t, src, "secret", "items")
		if items == nil {
			continue
		}
		its, _ := items.Elements()
		for _, item := range its {
			v, ok := data[value(t, src, "secret", "name")][value(t, item, "key")]
			if !ok {
				t.Fatalf("Secret %s key %s is missing: the kubelet would not start the pod", value(t, src, "secret", "name"), value(t, item, "key"))
			}
			write(t, filepath.Join(r.root, v1alpha1.MountConfigDir, value(t, item, "path")), v)
		}
	}
	init := lookup(t, r.pod, "initContainers", "[name="+v1alpha1.CredentialsContainer+"]")
	if init == nil {
		t.Fatal("the Deployment has no credentials init container")
	}
	if err := os.MkdirAll(filepath.Join(r.root, v1alpha1.MountCredentialsDir), 0o755); err != nil {
		t.Fatal(err)
	}
	var args []string
	for _, a := range stringsOf(t, init, "args") {
		if strings.HasPrefix(a, "/") {
			a = filepath.Join(r.root, a)
		}
		args = append(args, a)
	}
	out, err := exec.Command(testenv.FunctionBinary(t), args...).CombinedOutput()
	if err != nil {
		t.Fatalf("the credentials init container failed: %v\n%s", err, out)
	}
	return string(out)
}

func stringsOf(t *testing.T, n *yaml.RNode, field string) []string {
	t.Helper()
	l := lookup(t, n, field)
	if l == nil {
		return nil
	}
	elems, _ := l.Elements()
	var out []string
	for _, e := range elems {
		out = append(out, e.YNode().Value)
	}
	return out
}

// release is one Glance that the checks run on: Debian's packages on this
// machine, or a root file system of another Debian suite (built by
// rootfs.sh, cached outside the repository).
type release struct {
	name   string // e.g. "trixie (2025.1, glance-api 30.0.0)"
	rootfs string // "" for this machine
	// catalog is the openStackRelease whose committed option catalog this
	// Glance must reproduce.
	catalog string
	// wsgi: glance-api runs under uwsgi (the generated workload's launch
	// mode from 2026.1; sid's glance has no standalone server), where it
	// takes no flags and reads oslo.config's default dirs.
	wsgi bool
	// suite is the Debian suite whose python3 and libraries it runs on.
	suite string
}

// inPod runs a command the way the container sees its files: in a
// private mount namespace, the rendered and the credentials directories
// are bind-mounted at the paths the Deployment mounts them
// (/etc/glance/glance.conf.d/ and /etc/glance/glance-api.conf.d/), which
// are the directories oslo.config reads by default for glance-api. No
// --config-dir is passed, so the test proves that glance finds them. For
// a release in a root file system, the command runs chrooted there, with
// the test's folder, /proc and /dev mounted in.
func (r rendering) inPod(t *testing.T, dir string, env []string, name string, args ...string) *exec.Cmd {
	t.Helper()
	argv := append(stringsOf(t, r.container, "command"), stringsOf(t, r.container, "args")...)
	if slices.ContainsFunc(argv, func(a string) bool { return strings.HasPrefix(a, "--config-dir") }) {
		t.Fatalf("the container's command line names its own --config-dir: %v", argv)
	}
	if r.hosts != "" {
		env = append(env, "HOSTS="+r.hosts)
	}
	env = append(env, "CREDENTIAL_MOUNTS="+strings.Join(r.credentialMounts, " "))
	return r.rel.run(t, r.root, dir, env, name, args...)
}

// run runs a command of the release, with root's rendered directories
// mounted at the pod's paths (or none, when root is "").
func (rel release) run(t *testing.T, root, dir string, env []string, name string, args ...string) *exec.Cmd {
	t.Helper()
	R := rel.rootfs
	for _, d := range []string{v1alpha1.MountConfigDir, v1alpha1.MountCredentialsDir} {
		if err := os.MkdirAll(R+d, 0o755); err != nil { // mount points; they stay empty
			t.Fatal(err)
		}
	}
	script := `set -e
R="$1" root="$2" dir="$3"; shift 3
if [ -n "$R" ]; then
  mkdir -p "$R$TMP" "$R/proc" "$R/dev"
  mount --bind "$TMP" "$R$TMP"
  mount -t proc proc "$R/proc"
  mount --rbind /dev "$R/dev"
fi
if [ -n "${HOSTS:-}" ]; then mount --bind "$HOSTS" "$R/etc/hosts"; fi
if [ -n "$root" ]; then
  mount --bind "$root/etc/glance/glance.conf.d" "$R/etc/glance/glance.conf.d"
  for m in ${CREDENTIAL_MOUNTS:-/etc/glance/glance-api.conf.d/}; do
    mkdir -p "$R$m" && mount --bind "$root/etc/glance/glance-api.conf.d" "$R$m"
  done
fi
if [ -n "$R" ]; then exec chroot "$R" /bin/sh -c 'cd "$0" && exec "$@"' "$dir" "$@"; fi
cd "$dir" && exec "$@"`
	if root != "" {
		for _, d := range []string{v1alpha1.MountConfigDir, v1alpha1.MountCredentialsDir} {
			if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	if dir == "" {
		dir = "/"
	}
	cmd := exec.Command("unshare", append([]string{"-m", "--", "sh", "-c", script, "sh", R, root, dir, name}, args...)...)
	// The test's files are all below the temporary folder, which the
	// root file system sees at the same path.
	cmd.Env = append(append(os.Environ(), "LANG=C.UTF-8", "PYTHONPATH=", "TMP="+os.TempDir()), env...)
	return cmd
}

// glanceAPI is a running Debian glance-api.
type glanceAPI struct {
	url    string
	cmd    *exec.Cmd
	log    string
	exited chan struct{} // closed when the process has been waited for
}

// startGlance runs glance-api, which outlives the calling (sub)test: the
// caller stops it. It runs on the rendered files, unmodified, plus one
// file of test-only overrides (loopback bind, one worker); the database comes from the
// credentials file like everything secret. The environment is the
// container's (glance-krm sets none).
func startGlance(t *testing.T, root string, r rendering) *glanceAPI {
	t.Helper()
	return startGlanceReady(t, root, r, "/v2/info/stores")
}

// startGlanceReady is startGlance, ready when path answers 200.
func startGlanceReady(t *testing.T, root string, r rendering, ready string) *glanceAPI {
	t.Helper()
	return serveGlance(t, root, r, ready, true)
}

// serveGlance starts glance-api, after glance-manage db_sync when sync
// is set (an upgrade runs its own glance-manage steps instead).
func serveGlance(t *testing.T, root string, r rendering, ready string, sync bool) *glanceAPI {
	t.Helper()
	port := testenv.FreePort(t)
	overrides := write(t, filepath.Join(root, "test-overrides.d", "test-overrides.conf"), fmt.Sprintf(`# Test only: what needs a cluster.
[DEFAULT]
bind_host = 127.0.0.1
bind_port = %d
workers = 1
`, port))
	// The overrides are a --config-file: that replaces the default config
	// files only, and the default directories (the rendered files and the
	// credentials) are read after it and win.
	args := []string{"--config-file", overrides}

	// glance-manage's default directories are glance.conf.d and
	// glance-manage.conf.d: a db-sync job names glance-krm's explicitly.
	if sync {
		if out, err := r.manage(t, root, "db_sync").CombinedOutput(); err != nil {
			t.Fatalf("glance-manage db_sync: %v\n%s", err, out)
		}
	}

	g := &glanceAPI{url: fmt.Sprintf("http://127.0.0.1:%d", port), log: filepath.Join(root, fmt.Sprintf("glance-api-%d.log", port))}
	log, err := os.Create(g.log)
	if err != nil {
		t.Fatal(err)
	}
	if r.rel.wsgi {
		// No standalone server: uwsgi serves glance.wsgi.api, which takes
		// no flags (the overrides above are for glance-manage only).
		// The HTTP options are Debian's glance-api-uwsgi.ini's; without
		// its "Connection: close" a client reusing a connection uwsgi has
		// dropped gets "connection reset by peer" now and then.
		g.cmd = r.inPod(t, root, nil, "uwsgi", "--plugin", "http,python3", "--http-socket", fmt.Sprintf("127.0.0.1:%d", port),
			"--module", "glance.wsgi.api:application", "--master", "--processes", "1", "--threads", "1", "--lazy-apps",
			"--die-on-term", "--buffer-size", "65535", "--http-auto-chunked", "--http-chunked-input", "--http-raw-body",
			"--chunked-input-limit", "1073741824", "--enable-threads", "--add-header", "Connection: close")
	} else {
		g.cmd = r.inPod(t, root, nil, "glance-api", args...)
	}
	g.cmd.Env = append(g.cmd.Env, containerEnv(t, r.container)...)
	g.cmd.Stdout, g.cmd.Stderr = log, log
	// Its own session: glance-api signals its whole process group.
	g.cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := g.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	g.exited = make(chan struct{})
	go func() { _ = g.cmd.Wait(); close(g.exited) }()
	deadline := time.Now().Add(90 * time.Second)
	for {
		resp, err := http.Get(g.url + ready)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return g
			}
		}
		select {
		case <-g.exited:
			t.Fatalf("glance-api exited: %v\n%s", g.cmd.ProcessState, g.tail())
		case <-time.After(500 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			g.stop()
			b, _ := os.ReadFile(g.log)
			t.Fatalf("glance-api did not become ready in 90 s: %v\n%s", err, strings.Join(strings.Split(string(b), "\n")[:min(80, strings.Count(string(b), "\n"))], "\n"))
		}
	}
}

// manage is glance-manage on the rendered files and the credentials, as
// the generated Jobs run it: glance-manage's default directories are
// glance.conf.d and glance-manage.conf.d, so both of glance-krm's are named;
// an empty --config-file keeps the packaged glance-manage.conf out.
func (r rendering) manage(t *testing.T, root string, args ...string) *exec.Cmd {
	t.Helper()
	none := write(t, filepath.Join(root, "test-overrides.d", "none.conf"), "")
	return r.inPod(t, root, nil, "glance-manage", append([]string{"--config-file", none, "--config-dir", v1alpha1.MountConfigDir,
		"--config-dir", v1alpha1.MountCredentialsDir}, args...)...)
}

// stop signals glance-api by its pid (it passes the signal to its process
// group), waits, and then clears any worker that outlived it.
func (g *glanceAPI) stop() {
	select {
	case <-g.exited:
	default:
		_ = g.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-g.exited:
		case <-time.After(20 * time.Second):
			_ = g.cmd.Process.Kill()
			<-g.exited
		}
	}
	_ = syscall.Kill(-g.cmd.Process.Pid, syscall.SIGKILL)
}

// containerEnv is the container's literal environment; glance-krm puts
// no secret there.
func containerEnv(t *testing.T, c *yaml.RNode) []string {
	t.Helper()
	var env []string
	l := lookup(t, c, "env")
	if l == nil {
		return nil
	}
	elems, _ := l.Elements()
	for _, e := range elems {
		if lookup(t, e, "valueFrom") != nil {
			t.Fatalf("env %s comes from a reference: glance-krm delivers secrets through its credentials file", value(t, e, "name"))
		}
		env = append(env, value(t, e, "name")+"="+value(t, e, "value"))
	}
	return env
}

func (g *glanceAPI) tail() string {
	b, _ := os.ReadFile(g.log)
	return tail(string(b), 30)
}

// testTLS is a CA made in the test and a server certificate it signed for
// 127.0.0.1.
type testTLS struct {
	caPEM             []byte
	certFile, keyFile string
}

func makeTLS(t *testing.T) *testTLS {
	t.Helper()
	dir := t.TempDir()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "glance-krm e2e CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return &testTLS{
		caPEM:    pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		certFile: write(t, filepath.Join(dir, "tls.crt"), string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))),
		keyFile:  write(t, filepath.Join(dir, "tls.key"), string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}))),
	}
}

func (c *testTLS) transport() *http.Transport {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(c.caPEM)
	return &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}
}
