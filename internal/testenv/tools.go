package testenv

import (
	"bytes"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"testing"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// RequireEnv is set by the Makefile: with it, a missing peer fails the test
// instead of skipping it, so `make test` can never pass by running less.
const RequireEnv = "GLANCE_KRM_REQUIRE_PEERS"

// External skips a test that starts an external process (a tool, an API
// server, a python) when `go test -short` asks for the fast inner loop.
func External(t testing.TB, what string) {
	t.Helper()
	if testing.Short() {
		t.Skipf("needs %s: not run with -short", what)
	}
}

// Missing reports a peer that is not there: a skip naming the make target
// that provides it, or a failure under make (RequireEnv).
func Missing(t testing.TB, what, target string) {
	t.Helper()
	if os.Getenv(RequireEnv) != "" {
		t.Fatalf("%s is missing, though %s provides it", what, target)
	}
	t.Skipf("%s is missing: `%s` provides it", what, target)
}

// Env is an environment variable the Makefile sets (a tool's path, a root
// file system): its value, or Missing.
func Env(t testing.TB, name, target string) string {
	t.Helper()
	External(t, name)
	v := os.Getenv(name)
	if v == "" {
		Missing(t, name, target)
	}
	return v
}

// Tool is a program: the path in env when it is set, else name on PATH,
// else Missing.
func Tool(t testing.TB, name, env, target string) string {
	t.Helper()
	External(t, name)
	if v := os.Getenv(env); v != "" {
		return v
	}
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	Missing(t, name+" ($"+env+")", target)
	return ""
}

// Kustomize is the pinned kustomize `make unit` builds.
func Kustomize(t testing.TB) string {
	t.Helper()
	return Env(t, "KUSTOMIZE_BIN", "make unit")
}

// FunctionBinary is bin/glance-krm-fn as `make build` writes it.
func FunctionBinary(t testing.TB) string {
	t.Helper()
	return Env(t, "GLANCE_KRM_FN", "make build")
}

// KustomizeBuild runs `kustomize build` with the flags every document of
// ours gives (or the ones passed) and returns stdout, stderr and its error.
func KustomizeBuild(t testing.TB, dir string, flags ...string) (stdout, stderr string, err error) {
	t.Helper()
	if flags == nil {
		flags = []string{"--enable-alpha-plugins", "--enable-exec"}
	}
	cmd := exec.Command(Kustomize(t), append(append([]string{"build"}, flags...), dir)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	return out.String(), errb.String(), err
}

// CopyTree copies a folder, every file with mode 0644 (as the Argo CD
// sidecar extracts a repository), through rewrite when it is not nil
// (called with the path relative to from).
func CopyTree(t testing.TB, from, to string, rewrite func(rel string, b []byte) []byte) {
	t.Helper()
	err := filepath.WalkDir(from, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(from, path)
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if rewrite != nil {
			b = rewrite(rel, b)
		}
		return os.WriteFile(filepath.Join(to, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Files are the regular files under dir, relative to it, sorted.
func Files(t testing.TB, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		out = append(out, rel)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

// FreePort is a TCP port nothing listens on right now.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port
}

// MainNeeds is for a TestMain whose whole package needs one peer named by
// an environment variable (KUBEBUILDER_ASSETS): false, after saying why,
// when the package is to run nothing (-short, or the peer is missing);
// under make a missing peer ends the run with exit code 1.
func MainNeeds(env, target string) bool {
	if !flag.Parsed() {
		flag.Parse()
	}
	switch {
	case testing.Short():
		fmt.Printf("skipping the package: it needs %s; not run with -short\n", env)
		return false
	case os.Getenv(env) != "":
		return true
	case os.Getenv(RequireEnv) != "":
		fmt.Fprintf(os.Stderr, "%s is not set, though `%s` provides it\n", env, target)
		os.Exit(1)
	}
	fmt.Printf("skipping the package: %s is not set; `%s` provides it\n", env, target)
	return false
}

// APIServer is KUBEBUILDER_ASSETS for a test that starts its own API
// server: skipped under -short or when it is missing.
func APIServer(t testing.TB) {
	t.Helper()
	Env(t, "KUBEBUILDER_ASSETS", "make unit")
}

// MustBuild is KustomizeBuild with the function, failing the test on an
// error, parsed into objects.
func MustBuild(t testing.TB, dir string) []*yaml.RNode {
	t.Helper()
	out, stderr, err := KustomizeBuild(t, dir)
	if err != nil {
		t.Fatalf("kustomize build %s: %v\n%s", dir, err, stderr)
	}
	nodes, err := (&kio.ByteReader{Reader: strings.NewReader(out)}).Read()
	if err != nil {
		t.Fatal(err)
	}
	return nodes
}
