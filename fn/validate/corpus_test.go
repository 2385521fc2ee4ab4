package validate_test

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/c5c3/glance-krm/internal/testenv"
)

// fnBinary is the function binary built from this tree: the corpus runs
// `glance-krm-fn validate` as a user does, and kustomize runs the same
// binary as the transformer.
var fnBinary string

func TestMain(m *testing.M) {
	flag.Parse()
	code := func() int {
		if !testing.Short() {
			dir, err := os.MkdirTemp("", "validate-fn-")
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
			defer func() { _ = os.RemoveAll(dir) }()
			fnBinary = filepath.Join(dir, "glance-krm-fn")
			cmd := exec.Command("go", "build", "-trimpath", "-o", fnBinary, "./fn")
			cmd.Dir, cmd.Stdout, cmd.Stderr = testenv.RepoRoot(), os.Stderr, os.Stderr
			cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
			if err := cmd.Run(); err != nil {
				fmt.Fprintln(os.Stderr, "building the function:", err)
				return 1
			}
		}
		return m.Run()
	}()
	os.Exit(code)
}

// A verdict is how a build ends: it passes, the function reports an error
// (kustomize fails with the function's exit status), or kustomize itself
// fails. validate's exit codes are the same three: 0, 1, 2.
type verdict int

const (
	passes verdict = iota
	functionFails
	kustomizeFails
)

func (v verdict) String() string {
	return [...]string{"passes", "fails in the function", "fails in kustomize"}[v]
}

// A where is a finding as a reviewer sees it: level, file (relative to
// the copied corpus or examples root) and line.
type where struct {
	Level, File string
	Line        int
}

// corpusCase is a kustomization under testdata/kustomize/cases: the
// verdict its build must have, and every error and warning validate must
// report, at the file and line a reviewer should look at.
type corpusCase struct {
	want     verdict
	findings []where
}

var corpus = map[string]corpusCase{
	// A strategic merge patch file: the host is only in the patch.
	"patch-file-bad-host":     {functionFails, []where{{"error", "cases/patch-file-bad-host/patch.yaml", 8}}},
	"patch-file-valid-bucket": {passes, nil},
	// A JSON 6902 patch file: the value of the op that empties the bucket.
	"json6902-file-empty-bucket": {functionFails, []where{{"error", "cases/json6902-file-empty-bucket/bucket.yaml", 4}}},
	// Two defaults: the rule is the Glance's (its stores are named in the
	// message), so the finding is at the Glance.
	"two-defaults-patch-file": {functionFails, []where{{"error", "base/glance.yaml", 1}}},
	// An inline patch: the line inside kustomization.yaml's block.
	"inline-patch-warning":              {passes, []where{{"warning", "cases/inline-patch-warning/kustomization.yaml", 16}}},
	"inline-json6902-store-description": {functionFails, []where{{"error", "cases/inline-json6902-store-description/kustomization.yaml", 14}}},
	"deprecated-psm-bad-host":           {functionFails, []where{{"error", "cases/deprecated-psm-bad-host/host.yaml", 8}}},
	// A component's own file.
	"component-bad-store":   {functionFails, []where{{"error", "components/bad-store/backend.yaml", 16}}},
	"component-third-store": {passes, nil},
	// A configMapGenerator feeds the Glance's policy overrides: the
	// reference is the patch's.
	"configmap-policy-valid":         {passes, nil},
	"configmap-policy-opens-metadef": {functionFails, []where{{"error", "cases/configmap-policy-opens-metadef/policy-ref.yaml", 7}}},
	"secretgenerator-credentials":    {passes, nil},
	// A name the namePrefix made: the namePrefix line.
	"nameprefix-valid":    {passes, nil},
	"nameprefix-too-long": {functionFails, []where{{"error", "cases/nameprefix-too-long/kustomization.yaml", 6}}},
	"namespace-valid":     {passes, nil},
	// Where the function is declared decides what it sees.
	"fn-in-base-overlay-breaks-host": {passes, nil},
	"fn-in-both-overlay-breaks-host": {functionFails, []where{{"error", "cases/fn-in-both-overlay-breaks-host/patch.yaml", 8}}},
	"fn-in-base-fixed-above":         {functionFails, []where{{"error", "cases/fn-in-base-fixed-above/base/bucket.yaml", 4}}},
	// The overlay's patch writes the same value after the run: not it.
	"fn-in-base-repeated-above": {functionFails, []where{{"error", "cases/fn-in-base-repeated-above/base/host.yaml", 8}}},
	// A patch for other stores (a label selector, which validate does not
	// judge) writes another value: not it.
	"label-selected-patch": {functionFails, []where{{"error", "cases/label-selected-patch/primary-host.yaml", 8}}},
	// A ControlPlane: a patch inside the field the projection refuses,
	// and a Glance the function projected from it (at the ControlPlane).
	"controlplane-two-defaults": {functionFails, []where{
		{"error", "cases/controlplane-two-defaults/kustomization.yaml", 11},
		{"warning", "controlplane/deployment.yaml", 3}}},
	"controlplane-hand-written-default": {functionFails, []where{
		{"error", "controlplane/controlplane.yaml", 5},
		{"error", "controlplane/controlplane.yaml", 5}}},
	// The function declared inline in the kustomization.
	"inline-function-config": {functionFails, []where{{"error", "base/glance.yaml", 1}}},
	// The function's wiring stage, after its checks: the Deployment.
	"images-mirror-beside-function":      {passes, nil},
	"images-release-tag-beside-function": {functionFails, []where{{"error", "base/glance.yaml", 8}}},
	// Nothing runs the function: the build checks nothing, and validate
	// says so.
	"no-function": {passes, []where{{"warning", "cases/no-function/kustomization.yaml", 0}}},
	// kustomize's own failures.
	"missing-patch-file":   {kustomizeFails, nil},
	"patch-without-target": {kustomizeFails, nil},
}

// TestValidateGivesTheBuildsVerdict: for every case of the corpus and
// every example kustomization, the real kustomize build with the function
// and `glance-krm-fn validate` on the same directory end the same way
// (the build fails because of the function ⇔ exit 1; kustomize fails ⇔
// exit 2), and each finding names the file and line of the corpus table.
func TestValidateGivesTheBuildsVerdict(t *testing.T) {
	testenv.External(t, "kustomize and the function binary")
	testenv.Kustomize(t)
	root := copyTree(t, "testdata/kustomize")
	entries, err := os.ReadDir(filepath.Join(root, "cases"))
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, e := range entries {
		dirs = append(dirs, e.Name())
	}
	var listed []string
	for name := range corpus {
		listed = append(listed, name)
	}
	slices.Sort(listed)
	if d := cmp.Diff(listed, dirs); d != "" {
		t.Fatalf("the corpus table and testdata/kustomize/cases differ (-table +cases):\n%s", d)
	}
	for _, name := range dirs {
		c := corpus[name]
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join("cases", name)
			built, stderr := build(t, root, dir)
			if built != c.want {
				t.Fatalf("the build %s; the case says it %s\n%s", built, c.want, stderr)
			}
			got, found, out := validate(t, root, dir)
			if got != built {
				t.Fatalf("the build %s; validate says it %s\n%s\nbuild:\n%s", built, got, out, stderr)
			}
			if d := cmp.Diff(c.findings, found); d != "" {
				t.Errorf("errors and warnings (-want +got):\n%s\n%s", d, out)
			}
		})
	}
}

// TestSARIFOfABuild: validate's SARIF for a kustomization follows the
// published schema, and locates the finding in the patch.
func TestSARIFOfABuild(t *testing.T) {
	testenv.External(t, "the function binary")
	root := copyTree(t, "testdata/kustomize")
	cmd := exec.Command(fnBinary, "validate", "--format", "sarif", "cases/patch-file-bad-host")
	cmd.Dir = root
	out, err := cmd.Output()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("validate: %v\n%s", err, out)
	}
	testenv.ValidSARIF(t, out)
	if !strings.Contains(string(out), `"uri": "cases/patch-file-bad-host/patch.yaml"`) {
		t.Errorf("the SARIF does not name the patch:\n%s", out)
	}
}

// TestValidateGivesTheExamplesVerdicts: the same agreement on every
// kustomization under examples/ (a container function runs as the same
// binary through exec, a bare glance-krm-fn is found on PATH).
func TestValidateGivesTheExamplesVerdicts(t *testing.T) {
	testenv.External(t, "kustomize and the function binary")
	testenv.Kustomize(t)
	root := copyTree(t, filepath.Join(testenv.RepoRoot(), "examples"))
	var dirs []string
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && strings.HasPrefix(d.Name(), ".") {
			return filepath.SkipDir
		}
		if d.Name() == "kustomization.yaml" {
			rel, err := filepath.Rel(root, filepath.Dir(path))
			dirs = append(dirs, rel)
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	verdicts := map[string]verdict{}
	for _, dir := range dirs {
		t.Run(dir, func(t *testing.T) {
			built, stderr := build(t, root, dir)
			got, _, out := validate(t, root, dir)
			if got != built {
				t.Errorf("the build %s; validate says it %s\n%s\nbuild:\n%s", built, got, out, stderr)
			}
			verdicts[dir] = built
		})
	}
	// The corpus would agree trivially if every build passed.
	if verdicts["standalone-two-defaults"] != functionFails || verdicts["standalone"] != passes {
		t.Errorf("standalone must pass and standalone-two-defaults fail: %v", verdicts)
	}
}

// TestValidateRefusesWhatItCannotRun: a remote base, another function
// than glance-krm and a kustomize exec plugin end validate with exit 2 and
// a message naming them, never a verdict it cannot know (the other
// function and the plugin here make every store a default: the build
// fails, and validate without them would pass).
func TestValidateRefusesWhatItCannotRun(t *testing.T) {
	testenv.External(t, "kustomize and the function binary")
	testenv.Kustomize(t)
	root := copyTree(t, "testdata/kustomize")
	if err := os.Chmod(filepath.Join(root, "refused", "foreign-function", "set-default.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	plugin := filepath.Join(home, "example.com", "v1", "makedefault", "MakeDefault")
	testenv.CopyTree(t, filepath.Join(root, "refused", "legacy-plugin"), filepath.Dir(plugin), nil)
	if err := os.Chmod(plugin, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUSTOMIZE_PLUGIN_HOME", home)
	for dir, want := range map[string]string{
		"refused/remote-base":                  "remote resource https://github.com/c5c3/glance-krm",
		"refused/foreign-function":             "SetDefault set-default (exec ./set-default.sh) declared in refused/foreign-function/set-default.yaml",
		"refused/legacy-plugin":                "kustomize exec or Go plugin",
		"refused/inline-foreign-function":      "SetDefault set-default (exec ../foreign-function/set-default.sh) declared in refused/inline-foreign-function/kustomization.yaml",
		"refused/inline-flow-foreign-function": "SetDefault set-default (exec ../foreign-function/set-default.sh) declared in refused/inline-flow-foreign-function/kustomization.yaml",
		"refused/escaped-annotation":           "SetDefault set-default (exec ../foreign-function/set-default.sh) declared in refused/escaped-annotation/set-default.yaml",
		"refused/list-foreign-function":        "SetDefault set-default (exec ../foreign-function/set-default.sh) declared in refused/list-foreign-function/set-default.yaml",
		"refused/transformer-folder":           "takes transformers from the folder functions",
	} {
		t.Run(dir, func(t *testing.T) {
			got, _, out := validate(t, root, dir)
			if got != kustomizeFails || !strings.Contains(out, want) {
				t.Errorf("validate %s: %s, want exit 2 naming %q:\n%s", dir, got, want, out)
			}
		})
	}
	for _, dir := range []string{"refused/foreign-function", "refused/legacy-plugin", "refused/inline-foreign-function", "refused/inline-flow-foreign-function", "refused/escaped-annotation", "refused/list-foreign-function", "refused/transformer-folder"} {
		if built, stderr := build(t, root, dir); built != functionFails {
			t.Errorf("%s should have made the build fail: it %s\n%s", dir, built, stderr)
		}
	}
}

var (
	execPath        = regexp.MustCompile(`(\.\./)+bin/glance-krm-fn`)
	containerAsExec = regexp.MustCompile(`container:\n(\s+)image: \S+`)
	// annotation is one line of `validate --format github`.
	annotation = regexp.MustCompile(`^::(error|warning|notice) ([^:]*)::`)
)

// copyTree copies a tree of kustomizations with every function pointed at
// fnBinary.
func copyTree(t *testing.T, from string) string {
	t.Helper()
	dir := t.TempDir()
	testenv.CopyTree(t, from, dir, func(_ string, b []byte) []byte {
		b = execPath.ReplaceAll(b, []byte(fnBinary))
		return containerAsExec.ReplaceAll(b, []byte("exec:\n${1}path: "+fnBinary))
	})
	return dir
}

// build is the real kustomize build of root/dir with the function on PATH
// (for a bare glance-krm-fn).
func build(t *testing.T, root, dir string) (verdict, string) {
	t.Helper()
	cmd := exec.Command(testenv.Kustomize(t), "build", "--enable-alpha-plugins", "--enable-exec", dir)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(fnBinary)+string(os.PathListSeparator)+os.Getenv("PATH"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return passes, stderr.String()
	case !errors.As(err, &exit):
		t.Fatal(err)
	case strings.Contains(stderr.String(), "glance-krm: failed with the errors above"):
		return functionFails, stderr.String()
	}
	return kustomizeFails, stderr.String()
}

// validate runs `glance-krm-fn validate --format github` on root/dir from
// root: its exit code as a verdict, its errors and warnings, its output.
func validate(t *testing.T, root, dir string) (verdict, []where, string) {
	t.Helper()
	cmd := exec.Command(fnBinary, "validate", "--format", "github", dir)
	cmd.Dir = root
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	out := stdout.String() + stderr.String()
	code := 0
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	if code > 2 {
		t.Fatalf("validate exited %d:\n%s", code, out)
	}
	var found []where
	for _, l := range strings.Split(stdout.String(), "\n") {
		m := annotation.FindStringSubmatch(l)
		if m == nil || m[1] == "notice" {
			continue
		}
		w := where{Level: m[1]}
		for _, p := range strings.Split(m[2], ",") {
			k, v, _ := strings.Cut(p, "=")
			switch k {
			case "file":
				w.File = strings.NewReplacer("%2C", ",", "%3A", ":", "%25", "%").Replace(v)
			case "line":
				w.Line, _ = strconv.Atoi(v)
			}
		}
		found = append(found, w)
	}
	return verdict(code), found, out
}
