// Package testenv finds the real peers the tests run against. It is
// imported by tests only.
package testenv

import (
	"os"
	"os/exec"
	"strconv"
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
