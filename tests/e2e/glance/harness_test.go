//go:build e2e

package glance_test

import (
	"bytes"
	"encoding/base64"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/c5c3/glance-krm/internal/testenv"
	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

// tally counts the named checks per release (the release's subtest of
// TestGlanceMultiStore; "" for checks that run on no Glance release, such
// as chainsaw's): testenv.Tally, as the node's suites count theirs.
var tally testenv.Tally

// check runs one named assertion as a subtest and counts it.
func check(t *testing.T, name string, f func(t *testing.T)) bool {
	release := ""
	if parts := strings.SplitN(t.Name(), "/", 3); len(parts) > 1 && parts[0] == "TestGlanceMultiStore" {
		release = parts[1]
	}
	return tally.Check(t, release, name, f)
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
