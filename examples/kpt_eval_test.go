package examples_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/c5c3/glance-krm/internal/testenv"
)

// TestKptEvalShowsTheFunctionsVerdict: the imperative door, `kpt fn eval`
// with the function as an exec step and its configuration as key=value
// arguments (kpt's ConfigMap), writes the function's error and its exit
// code to --results-dir and leaves the package as it was; a valid
// configuration renders.
func TestKptEvalShowsTheFunctionsVerdict(t *testing.T) {
	kpt := testenv.Tool(t, "kpt", "KPT_BIN", "make e2e-packaging")
	for name, c := range map[string]struct {
		arg      string
		fails    bool
		contains []string
	}{
		"a bad value": {arg: "workloads=bogus", fails: true, contains: []string{
			"exitCode: 1",
			`functionConfig field data.workloads: "bogus" is not supported: use generate (the default) or none`,
		}},
		"an unknown field": {arg: "workload=none", fails: true, contains: []string{
			"exitCode: 1", "functionConfig field data.workload is not understood",
		}},
		"a valid configuration": {arg: "workloads=none", contains: []string{"exitCode: 0", "rendered Glance openstack/glance"}},
	} {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "kpt")
			testenv.CopyTree(t, "kpt", dir, nil)
			before := testenv.Files(t, dir)
			results := t.TempDir()
			out, err := exec.Command(kpt, "fn", "eval", dir, "--exec", fnBinary, "--results-dir", results, "--", c.arg).CombinedOutput()
			if failed := err != nil; failed != c.fails {
				t.Fatalf("kpt fn eval failed=%v, want %v: %v\n%s", failed, c.fails, err, out)
			}
			b, err := os.ReadFile(filepath.Join(results, "results.yaml"))
			if err != nil {
				t.Fatalf("no results file: %v\n%s", err, out)
			}
			for _, want := range c.contains {
				if !strings.Contains(string(b), want) {
					t.Errorf("results.yaml lacks %q:\n%s", want, b)
				}
			}
			if after := testenv.Files(t, dir); c.fails && strings.Join(after, ",") != strings.Join(before, ",") {
				t.Errorf("a failed eval changed the package's files: %v -> %v", before, after)
			}
		})
	}
}
