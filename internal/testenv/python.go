// Package testenv finds the real peers the tests run against. It is
// imported by tests only.
package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Python is Debian's python3 of one suite, with that suite's glance,
// oslo.config and oslo.policy: this machine's (bookworm), or the one in a
// root file system that `make unit` builds with tests/e2e/glance/rootfs.sh
// and names in GLANCE_ROOTFS_<SUITE>.
type Python struct {
	Suite  string
	Rootfs string // "" for this machine's
}

// Pythons are the suites to check against; a suite whose root file system
// is not named is logged and left out.
func Pythons(t testing.TB) []Python {
	t.Helper()
	OsloConfig(t)
	out := []Python{{Suite: "bookworm"}}
	for _, r := range [][2]string{{"trixie", "GLANCE_ROOTFS_TRIXIE"}, {"sid", "GLANCE_ROOTFS_SID"}} {
		if dir := os.Getenv(r[1]); dir != "" {
			out = append(out, Python{r[0], dir})
		} else {
			t.Logf("%s is not set: %s's python3 is not checked (make unit builds it)", r[1], r[0])
		}
	}
	return out
}

// Command runs a python3 script of that suite. Under a root file system
// the temporary folder is bind-mounted at the same path, so files written
// there by the test are read at the paths the test passes.
func (p Python) Command(script string, args ...string) *exec.Cmd {
	var cmd *exec.Cmd
	if p.Rootfs == "" {
		cmd = exec.Command("/usr/bin/python3", append([]string{"-c", script}, args...)...)
	} else {
		tmp := os.TempDir()
		cmd = exec.Command("unshare", append([]string{"-m", "--", "sh", "-c",
			`mkdir -p "$1$2" && mount --bind "$2" "$1$2" && r="$1" && shift 2 && exec chroot "$r" /usr/bin/python3 -c "$@"`,
			"sh", p.Rootfs, tmp, script}, args...)...)
	}
	cmd.Env = append(os.Environ(), "LANG=C.UTF-8", "PYTHONPATH=")
	return cmd
}

// GlanceRelease is the OpenStack release series of a glance major version:
// glance 25 is 2022.2 (Zed), and each release since is one major version.
func GlanceRelease(major int) string {
	h := 2022*2 + 1 + major - 25 // half-years: .1 even, .2 odd
	return strconv.Itoa(h/2) + "." + strconv.Itoa(h%2+1)
}

// OsloConfig is this machine's Debian python3 with python3-oslo.config:
// its path, or a skip (a failure under make) naming `make deps-python`.
func OsloConfig(t testing.TB) string {
	t.Helper()
	External(t, "Debian's python3-oslo.config")
	const python = "/usr/bin/python3"
	if out, err := exec.Command(python, "-c", "import oslo_config").CombinedOutput(); err != nil {
		Missing(t, "Debian's python3-oslo.config ("+err.Error()+": "+string(out)+")", "make deps-python")
	}
	return python
}

// GlancePython is the python3 of one release's Glance, with that
// release's glance, glance_store and oslo libraries: this machine's, or
// the one in the root file system Env names.
type GlancePython struct {
	Release string
	Env     string // GLANCE_ROOTFS_<NAME>; "" for this machine's
	Python
}

// GlancePythons are the python3 of every release the e2e tests run:
// bookworm's on this machine (2022.2, `make deps-glance`) and the root
// file systems of tests/e2e/glance/rootfs.sh that make names in
// GLANCE_ROOTFS_<NAME>. Check each under t.Run(Release) after Require.
func GlancePythons() []GlancePython {
	out := []GlancePython{{Release: "2022.2", Python: Python{Suite: "bookworm"}}}
	for _, r := range [][3]string{
		{"2025.1", "GLANCE_ROOTFS_TRIXIE", "trixie"},
		{"2025.2", "GLANCE_ROOTFS_2025_2", "2025.2 over trixie"},
		{"2026.1", "GLANCE_ROOTFS_2026_1", "2026.1 over trixie"},
		{"2026.2", "GLANCE_ROOTFS_SID", "sid"},
	} {
		out = append(out, GlancePython{Release: r[0], Env: r[1], Python: Python{Suite: r[2], Rootfs: os.Getenv(r[1])}})
	}
	return out
}

// Require skips (fails under make) when the release's Glance is not
// there: its root file system is not named, or this machine's python3
// has no glance.
func (g GlancePython) Require(t testing.TB) {
	t.Helper()
	OsloConfig(t)
	if g.Env != "" {
		if g.Rootfs == "" {
			Missing(t, g.Env+" (the root file system of "+g.Release+"'s Glance)", "make unit")
		}
		return
	}
	if out, err := exec.Command("/usr/bin/python3", "-c", "import glance, glance_store").CombinedOutput(); err != nil {
		Missing(t, "Debian's glance-api ("+err.Error()+": "+string(out)+")", "make deps-glance")
	}
}

// OsloNamespaces are glance-api's oslo-config-generator namespaces:
// krm/catalogs/namespaces.txt, the one list of them.
func OsloNamespaces(t testing.TB) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(RepoRoot(), "krm", "catalogs", "namespaces.txt"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Fields(string(b))
}

// OsloNamespacesEnv is the environment variable the catalog scripts
// (hack/catalog.py, hack/secret-options.py, krm/catalogs/testdata/
// catalog_read.py) read OsloNamespaces from.
func OsloNamespacesEnv(t testing.TB) string {
	t.Helper()
	return "OSLO_NAMESPACES=" + strings.Join(OsloNamespaces(t), " ")
}
