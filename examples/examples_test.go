// Package examples_test runs every example with the real kustomize binary
// and the real function binary, as a user would.
package examples_test

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/c5c3/glance-krm/internal/testenv"
	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

var fnBinary string

// TestMain builds the function where the examples' exec path points
// (bin/glance-krm-fn), so `go test ./examples/` works on its own; under
// -short nothing is built and every test here skips (they all run
// kustomize).
func TestMain(m *testing.M) {
	flag.Parse()
	root, _ := filepath.Abs("..")
	fnBinary = filepath.Join(root, "bin", "glance-krm-fn")
	if !testing.Short() {
		cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", fnBinary, "./fn")
		cmd.Dir, cmd.Stdout, cmd.Stderr = root, os.Stderr, os.Stderr
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if err := cmd.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "building the function:", err)
			os.Exit(1)
		}
	}
	os.Exit(m.Run())
}

func kustomizeBin(t *testing.T) string { t.Helper(); return testenv.Kustomize(t) }

// build runs `kustomize build` with the flags every doc of ours gives.
func build(t *testing.T, dir string, flags ...string) (stdout, stderr string, err error) {
	t.Helper()
	return testenv.KustomizeBuild(t, dir, flags...)
}

// buildVerdict builds dir with the real kustomize: when fail is set, the
// build must fail saying it (and nil is returned); else it must pass and
// its output is returned.
func buildVerdict(t *testing.T, dir, fail string, check func(err error, stderr string)) []*yaml.RNode {
	t.Helper()
	stdout, stderr, err := build(t, dir)
	if check != nil {
		check(err, stderr)
	}
	if fail != "" {
		if err == nil || !strings.Contains(stderr, fail) {
			t.Fatalf("the build must fail with %q; err %v, stderr:\n%s", fail, err, stderr)
		}
		return nil
	}
	if err != nil {
		t.Fatalf("kustomize build: %v\n%s", err, stderr)
	}
	out, err := (&kio.ByteReader{Reader: strings.NewReader(stdout)}).Read()
	if err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatal("the build passed and wrote nothing")
	}
	return out
}

func mustBuild(t *testing.T, dir string) []*yaml.RNode {
	t.Helper()
	return testenv.MustBuild(t, dir)
}

func find(t *testing.T, nodes []*yaml.RNode, kind, namePrefix string) *yaml.RNode {
	t.Helper()
	var found *yaml.RNode
	for _, n := range nodes {
		if n.GetKind() == kind && strings.HasPrefix(n.GetName(), namePrefix) {
			if found != nil {
				t.Fatalf("more than one %s %s*", kind, namePrefix)
			}
			found = n
		}
	}
	if found == nil {
		t.Fatalf("no %s %s* in the output", kind, namePrefix)
	}
	return found
}

func str(t *testing.T, n *yaml.RNode, path ...string) string {
	t.Helper()
	v, err := n.Pipe(yaml.Lookup(path...))
	if err != nil || v == nil {
		t.Fatalf("%s %s has no %v", n.GetKind(), n.GetName(), path)
	}
	return v.YNode().Value
}

// names returns the ConfigMap and Secret the Deployment mounts.
func names(t *testing.T, nodes []*yaml.RNode) (configMap, secret string) {
	return mountedConfig(find(t, nodes, "Deployment", "glance"))
}

// mountedConfig is the ConfigMap and the Secret the workload's config
// volume projects (one volume holds both rendered files).
func mountedConfig(d *yaml.RNode) (configMap, secret string) {
	sources, _ := d.Pipe(yaml.Lookup("spec", "template", "spec", "volumes", "[name="+v1alpha1.VolumeConfig+"]", "projected", "sources"))
	if sources == nil {
		return "", ""
	}
	elems, _ := sources.Elements()
	for _, src := range elems {
		if v, _ := src.Pipe(yaml.Lookup("configMap", "name")); v != nil {
			configMap = v.YNode().Value
		}
		if v, _ := src.Pipe(yaml.Lookup("secret", "name")); v != nil && secret == "" {
			secret = v.YNode().Value // the rendered Secret comes first
		}
	}
	return configMap, secret
}

func TestStandaloneExample(t *testing.T) {
	nodes := mustBuild(t, "standalone")
	sec := find(t, nodes, "Secret", "glance-backends-")
	conf := str(t, sec, "stringData", "backends.conf")
	for _, want := range []string{"[primary]", "[secondary]", "s3_store_bucket = glance-images\n", "s3_store_bucket = glance-images-2\n"} {
		if !strings.Contains(conf, want) {
			t.Errorf("backends.conf lacks %q:\n%s", want, conf)
		}
	}
	if strings.Contains(conf, "default_backend") || strings.Contains(conf, "access_key") {
		t.Errorf("backends.conf must carry neither the default nor credentials:\n%s", conf)
	}
	cm := find(t, nodes, "ConfigMap", "glance-config-")
	if api := str(t, cm, "data", "glance-api.conf"); !strings.Contains(api, "default_backend = primary\n") {
		t.Errorf("glance-api.conf lacks default_backend = primary:\n%s", api)
	}

	cmName, secName := names(t, nodes)
	if cmName != cm.GetName() || secName != sec.GetName() {
		t.Errorf("Deployment mounts %s and %s, want %s and %s", cmName, secName, cm.GetName(), sec.GetName())
	}
	d := find(t, nodes, "Deployment", "glance")
	c, err := d.Pipe(yaml.Lookup("spec", "template", "spec", "containers", "[name=glance-api]"))
	if err != nil || c == nil {
		t.Fatal("no glance-api container")
	}
	// Credentials reach glance-api through the init container's file: the
	// projected volume maps each Secret key to its section and option, and
	// the container has no secret environment at all.
	sources, err := d.Pipe(yaml.Lookup("spec", "template", "spec", "volumes", "[name="+v1alpha1.VolumeCredentialsIn+"]", "projected", "sources"))
	if err != nil || sources == nil {
		t.Fatal("no projected credentials volume")
	}
	got := map[string]string{}
	srcs, _ := sources.Elements()
	for _, src := range srcs {
		items, _ := src.Pipe(yaml.Lookup("secret", "items"))
		elems, _ := items.Elements()
		for _, it := range elems {
			optional := ""
			if o, _ := src.Pipe(yaml.Lookup("secret", "optional")); o != nil {
				optional = o.YNode().Value
			}
			got[str(t, it, "path")] = str(t, src, "secret", "name") + "/" + str(t, it, "key") + "/optional=" + optional
		}
	}
	want := map[string]string{
		"optional/primary/s3_store_access_key":   "garage-s3-credentials/access-key-id/optional=true",
		"optional/primary/s3_store_secret_key":   "garage-s3-credentials/secret-access-key/optional=true",
		"optional/secondary/s3_store_access_key": "garage-s3-credentials/access-key-id/optional=true",
		"optional/secondary/s3_store_secret_key": "garage-s3-credentials/secret-access-key/optional=true",
		"required/keystone_authtoken/password":   "glance-service-user/password/optional=",
		// Static managed mode: the username is the Glance's name, the
		// Secret holds the password only.
		"database/password": "glance-db/password/optional=",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("credentials volume (-want +got):\n%s", diff)
	}
	// No credential travels as environment: the only variables are
	// botocore's checksum switches (LP #2121144, a 2025.2 Glance on a
	// non-AWS S3 server), literal values.
	if env, _ := c.Pipe(yaml.Lookup("env")); env != nil {
		elems, _ := env.Elements()
		for _, e := range elems {
			if name := str(t, e, "name"); (name != v1alpha1.EnvRequestChecksum && name != v1alpha1.EnvResponseChecksum) || str(t, e, "value") != v1alpha1.ChecksumWhenRequired {
				t.Errorf("the glance-api container carries env: %s", e.MustString())
			}
		}
	}
	// The example's command names no --config-dir, so oslo.config reads
	// its default directories for glance-api, where the files are mounted.
	if argv := strings.Join(append(values(t, c, "command"), values(t, c, "args")...), " "); argv != "glance-api" {
		t.Errorf("glance-api argv %q: glance-krm adds no flag to a command line that names no --config-dir", argv)
	}
	mounts := map[string]string{}
	ms, _ := c.Pipe(yaml.Lookup("volumeMounts"))
	elems, _ := ms.Elements()
	for _, m := range elems {
		mounts[str(t, m, "mountPath")] = str(t, m, "name")
	}
	if diff := cmp.Diff(map[string]string{"/etc/glance/glance.conf.d/": v1alpha1.VolumeConfig, "/etc/glance/glance-api.conf.d/": v1alpha1.VolumeCredentials}, mounts); diff != "" {
		t.Errorf("glance-api mounts (-want +got):\n%s", diff)
	}
}

func values(t *testing.T, n *yaml.RNode, field string) []string {
	t.Helper()
	f := n.Field(field)
	if f == nil {
		return nil
	}
	elems, err := f.Value.Elements()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range elems {
		out = append(out, e.YNode().Value)
	}
	return out
}

func TestTwoDefaultsExampleFailsTheBuild(t *testing.T) {
	out, stderr, err := build(t, "standalone-two-defaults")
	if err == nil {
		t.Fatalf("kustomize build succeeded with two defaults:\n%s", out)
	}
	for _, want := range []string{"NoDefaultBackend", `"primary", "secondary"`, "exactly one default store is allowed", "Glance/openstack/glance"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if out != "" {
		t.Errorf("a failed build printed manifests:\n%s", out)
	}
}

// copyExample copies an example (with its subdirectories) into a
// temporary directory, pointing its exec path at the built binary, so a
// test can edit it.
func copyExample(t *testing.T, name string) string {
	t.Helper()
	dir := t.TempDir()
	testenv.CopyTree(t, name, dir, func(_ string, b []byte) []byte {
		return bytes.ReplaceAll(b, []byte("../../bin/glance-krm-fn"), []byte(fnBinary))
	})
	return dir
}

func edit(t *testing.T, file, old, new string) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(old)) {
		t.Fatalf("%s lacks %q", file, old)
	}
	if err := os.WriteFile(file, bytes.Replace(b, []byte(old), []byte(new), 1), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestDefaultFlipChangesOnlyTheConfigMap is the contract's invariant: the
// default lives in glance-api.conf, so flipping it renames the ConfigMap
// and leaves the backends Secret's name alone. Adding a backend renames
// both.
func TestDefaultFlipChangesOnlyTheConfigMap(t *testing.T) {
	dir := copyExample(t, "standalone")
	cm1, sec1 := names(t, mustBuild(t, dir))

	backends := filepath.Join(dir, "resources", "backends.yaml")
	edit(t, backends, "isDefault: true", "isDefault: false")
	edit(t, backends, "isDefault: false\n  s3:\n    host: http://garage.shared-services.svc.cluster.local:3900\n    bucket: glance-images-2",
		"isDefault: true\n  s3:\n    host: http://garage.shared-services.svc.cluster.local:3900\n    bucket: glance-images-2")
	nodes := mustBuild(t, dir)
	cm2, sec2 := names(t, nodes)
	if cm2 == cm1 {
		t.Errorf("ConfigMap name unchanged (%s) after a default flip", cm1)
	}
	if sec2 != sec1 {
		t.Errorf("Secret name changed %s -> %s after a default flip", sec1, sec2)
	}
	if api := str(t, find(t, nodes, "ConfigMap", "glance-config-"), "data", "glance-api.conf"); !strings.Contains(api, "default_backend = secondary\n") {
		t.Errorf("after the flip glance-api.conf says:\n%s", api)
	}

	b, err := os.ReadFile(backends)
	if err != nil {
		t.Fatal(err)
	}
	third := strings.ReplaceAll(strings.SplitN(string(b), "---\n", 2)[1], "name: secondary", "name: tertiary")
	third = strings.ReplaceAll(third, "isDefault: true", "isDefault: false")
	if err := os.WriteFile(backends, append(b, []byte("---\n"+third)...), 0o644); err != nil {
		t.Fatal(err)
	}
	cm3, sec3 := names(t, mustBuild(t, dir))
	if cm3 == cm2 || sec3 == sec2 {
		t.Errorf("adding a backend must rename both: ConfigMap %s -> %s, Secret %s -> %s", cm2, cm3, sec2, sec3)
	}
}

// TestWithoutEnableExecKustomizeSkipsSilently pins the trap the README
// warns about: with --enable-alpha-plugins alone, kustomize v5 skips an
// exec function, exits 0 and prints the unrendered input.
func TestWithoutEnableExecKustomizeSkipsSilently(t *testing.T) {
	out, _, err := build(t, "standalone", "--enable-alpha-plugins")
	if err != nil {
		t.Fatalf("this kustomize refuses instead of skipping (%v): the trap is gone, update the README", err)
	}
	if strings.Contains(out, "glance-backends-") {
		t.Fatal("kustomize ran the exec function without --enable-exec: update the README's warning")
	}
}
