package explain_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/c5c3/glance-krm/internal/testenv"
)

// TestCIScript runs review/explain-pr.sh as a CI job would, in a git
// repository whose working tree changes the committed configuration.
func TestCIScript(t *testing.T) {
	repo := t.TempDir()
	fnBin := testenv.FunctionBinary(t)
	testenv.CopyTree(t, filepath.Join(root, "examples"), filepath.Join(repo, "deploy"), func(_ string, b []byte) []byte {
		return bytes.ReplaceAll(b, []byte("../../bin/glance-krm-fn"), []byte(fnBin))
	})
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", repo}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=ci", "GIT_AUTHOR_EMAIL=ci@example.com", "GIT_COMMITTER_NAME=ci", "GIT_COMMITTER_EMAIL=ci@example.com")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q")
	git("add", ".")
	git("commit", "-qm", "base")
	script := filepath.Join(root, "review", "explain-pr.sh")
	run := func(env ...string) (string, int) {
		t.Helper()
		out := filepath.Join(t.TempDir(), "explain.md")
		cmd := exec.Command("bash", script, "HEAD", "deploy/standalone", out)
		cmd.Dir = repo
		cmd.Env = append(append(os.Environ(), "KUSTOMIZE="+testenv.Kustomize(t), "GLANCE_KRM_FN="+fnBin), env...)
		stdout, err := cmd.CombinedOutput()
		code := 0
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			code = exit.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		md, _ := os.ReadFile(out)
		if !strings.Contains(string(stdout), string(md)) {
			t.Errorf("the script did not print what it wrote")
		}
		return string(md), code
	}

	scenarios["default-flip"](t, filepath.Join(repo, "deploy"))
	md, code := run()
	if code != 0 || !strings.Contains(md, "default store (API default): primary → secondary") || !strings.Contains(md, "default-store-changed") {
		t.Errorf("default flip: exit %d\n%s", code, md)
	}

	git("checkout", "-q", "--", ".")
	scenarios["store-removed"](t, filepath.Join(repo, "deploy"))
	md, code = run()
	if code != 1 || !strings.Contains(md, "**Blocked**") {
		t.Errorf("store removed: exit %d, want 1\n%s", code, md)
	}
	md, code = run("GLANCE_KRM_ACKNOWLEDGE=store-removed/openstack/glance/secondary")
	if code != 0 || !strings.Contains(md, "[acknowledged]") {
		t.Errorf("store removed, acknowledged: exit %d, want 0\n%s", code, md)
	}

	edit(t, filepath.Join(repo, "deploy/standalone/resources/backends.yaml"), "isDefault: true", "isDefault: true\n  bogus: 1")
	if _, code := run(); code != 2 {
		t.Errorf("a render that fails: exit %d, want 2", code)
	}

	// The documented removal path: the drain commit is merged, the record
	// of its Job is committed with the removal (or fetched from the
	// cluster into a folder), and the removal passes with it.
	git("checkout", "-q", "--", ".")
	backends := filepath.Join(repo, "deploy/standalone/resources/backends.yaml")
	edit(t, backends, "  name: secondary\n  namespace: openstack\n", "  name: secondary\n  namespace: openstack\n  annotations:\n    glance.openstack.c5c3.io/drain-to: primary\n")
	git("commit", "-qam", "drain secondary")
	drained := filepath.Join(t.TempDir(), "draining.yaml")
	out, stderr, err := testenv.KustomizeBuild(t, filepath.Join(repo, "deploy/standalone"))
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if err := os.WriteFile(drained, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	scenarios["store-removed"](t, filepath.Join(repo, "deploy"))
	records := filepath.Join(repo, "deploy/glance-drain-records")
	if err := os.MkdirAll(records, 0o755); err != nil {
		t.Fatal(err)
	}
	if md, code := run("GLANCE_KRM_DRAIN_RECORDS=deploy/glance-drain-records"); code != 1 || !strings.Contains(md, "its record was not given") {
		t.Errorf("a removal without a record in the folder: exit %d, want 1\n%s", code, md)
	}
	rec := read(t, drainRecord(t, "glance", "secondary", "primary", "Complete", "0", drainJob(t, drained, "secondary")))
	if err := os.WriteFile(filepath.Join(records, "secondary.yaml"), []byte(rec), 0o644); err != nil {
		t.Fatal(err)
	}
	if md, code := run("GLANCE_KRM_DRAIN_RECORDS=deploy/glance-drain-records"); code != 0 || !strings.Contains(md, "says is complete") {
		t.Errorf("a removal with its record committed: exit %d, want 0\n%s", code, md)
	}
	if _, code := run("GLANCE_KRM_DRAIN_RECORDS=deploy/no-such-folder"); code != 2 {
		t.Errorf("a records path that does not exist: exit %d, want 2", code)
	}
}

// TestFolders: a render may be a kustomization (built) or a folder of
// rendered files (a kpt package, read as it is): the same report as from
// the built files.
func TestFolders(t *testing.T) {
	dir := example(t)
	beforeDir := filepath.Join(t.TempDir(), "before")
	testenv.CopyTree(t, dir, beforeDir, nil)
	before := render(t, filepath.Join(beforeDir, "standalone"))
	afterDir := scenarios["default-flip"](t, dir)
	after := render(t, afterDir)
	want, _ := runExplain(t, "--format", "json", before, after)

	cmd := exec.Command(testenv.FunctionBinary(t), "explain", "--format", "json", filepath.Join(beforeDir, "standalone"), afterDir)
	cmd.Env = append(os.Environ(), "KUSTOMIZE="+testenv.Kustomize(t))
	got, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, string(got)); d != "" {
		t.Errorf("kustomization folders (-files +folders):\n%s", d)
	}

	pkg := t.TempDir()
	b, _ := os.ReadFile(after)
	if err := os.WriteFile(filepath.Join(pkg, "rendered.yaml"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	if got, _ := runExplain(t, "--format", "json", before, pkg); got != want {
		t.Errorf("a folder of rendered files differs from the file:\n%s", cmp.Diff(want, got))
	}
}

// TestSeveralAPIsSteps explains each step of examples/several-apis from
// the renders the walking test keeps current (its .expected/): stores
// move between APIs, the stable Service switches, an API goes.
func TestSeveralAPIsSteps(t *testing.T) {
	dir := filepath.Join(root, "examples", "several-apis", ".expected")
	steps := []struct {
		from, to string
		lines    []string
	}{
		{"0-one-api", "1-add-api", []string{"added: Deployment/glance-next", "added: Service/glance-next", "stays: Deployment/glance", "default store (API next): (none) -> s3-new"}},
		{"1-add-api", "2-move-stores", []string{"stores of API default: s3-new, s3-old -> s3-old", "stores of API next: s3-new -> s3-new, s3-old", "rolls: Deployment/glance-next"}},
		{"2-move-stores", "3-switch-catalog", []string{"changes: Service/glance", "stays: Deployment/glance", "stays: Deployment/glance-next"}},
		{"3-switch-catalog", "4-remove-first", []string{"removed: Deployment/glance", "stays: Deployment/glance-next", "ConfigMap no longer mounted: "}},
	}
	for _, s := range steps {
		out, code := runExplain(t, filepath.Join(dir, s.from+".yaml"), filepath.Join(dir, s.to+".yaml"))
		if code != 0 || strings.Contains(out, "WARNING") {
			t.Errorf("%s -> %s: exit %d, or a warning where no store leaves the Glance:\n%s", s.from, s.to, code, out)
		}
		for _, l := range s.lines {
			if !strings.Contains(out, l) {
				t.Errorf("%s -> %s lacks %q:\n%s", s.from, s.to, l, out)
			}
		}
	}
}

// TestWithoutWorkload: a Glance rendered with workloads: none and no
// workload in the build is explained from its rendered copies.
func TestWithoutWorkload(t *testing.T) {
	dir := example(t)
	std := filepath.Join(dir, "standalone")
	edit(t, filepath.Join(std, "glance-krm.yaml"), "kind: RenderGlanceConfig\n", "kind: RenderGlanceConfig\nspec:\n  workloads: none\n")
	edit(t, filepath.Join(std, "resources", "kustomization.yaml"), "- deployment.yaml", "")
	before := render(t, std)
	after := render(t, scenarios["store-removed"](t, dir))
	out, code := runExplain(t, before, after)
	for _, l := range []string{"store secondary removed", "ConfigMap renamed: glance-config-", "Secret renamed: glance-backends-"} {
		if !strings.Contains(out, l) {
			t.Errorf("lacks %q:\n%s", l, out)
		}
	}
	if code != 1 || strings.Contains(out, "Deployment") {
		t.Errorf("exit %d (want 1), or a Deployment where none is rendered:\n%s", code, out)
	}
}

// TestNotARender: explain is a gate, and what it cannot read is not a
// render: an empty file, a failed run written to a file, a render cut
// short exit 2 naming why, never "everything was removed".
func TestNotARender(t *testing.T) {
	dir := example(t)
	before := render(t, filepath.Join(dir, "standalone"))
	good, err := os.ReadFile(before)
	if err != nil {
		t.Fatal(err)
	}
	// A failed run: the function's own output on an input it refuses.
	cmd := exec.Command(testenv.FunctionBinary(t))
	cmd.Stdin = strings.NewReader("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- apiVersion: glance.openstack.c5c3.io/v1alpha1\n  kind: Glance\n  metadata: {name: glance, namespace: openstack}\n  spec: {openStackRelease: nope}\n")
	failed, _ := cmd.Output()
	// A render cut short: without the rendered ConfigMap the workload
	// mounts.
	var kept []string
	for _, doc := range strings.Split(string(good), "\n---\n") {
		if !strings.Contains(doc, "kind: ConfigMap") || !strings.Contains(doc, "glance-config-") {
			kept = append(kept, doc)
		}
	}
	cut := strings.Join(kept, "\n---\n")
	if cut == string(good) {
		t.Fatal("the render has no rendered ConfigMap to cut")
	}
	unrendered, stderr, err := testenv.KustomizeBuild(t, filepath.Join(dir, "standalone"), "--enable-alpha-plugins")
	if err != nil || !strings.Contains(unrendered, "kind: GlanceBackend") {
		t.Fatalf("kustomize build without --enable-exec: %v\n%s", err, stderr)
	}
	for name, c := range map[string]struct {
		content string
		why     string
	}{
		"an empty file":      {"", "not a render: it holds no object"},
		"only a separator":   {"---\n", "not a render: it holds no object"},
		"a failed run":       {string(failed), "not a render: it is a run of the function that failed"},
		"a truncated render": {cut, "not a whole render: Glance openstack/glance has a rendered backends Secret but no rendered ConfigMap"},
		// kustomize without --enable-exec prints its input and exits 0.
		"the function did not run":  {unrendered, "the function did not run on Glance openstack/glance"},
		"two renders concatenated":  {string(good) + "---\n" + string(good), "appears twice"},
		"a render and a scalar":     {string(good) + "---\nglance\n", "is not an object but a scalar"},
		"a render and a non-object": {string(good) + "---\nglance: {}\n", "is not a Kubernetes object"},
		"not YAML":                  {"{: [", "explain: "},
	} {
		t.Run(name, func(t *testing.T) {
			after := filepath.Join(t.TempDir(), "after.yaml")
			if err := os.WriteFile(after, []byte(c.content), 0o644); err != nil {
				t.Fatal(err)
			}
			for _, args := range [][]string{{before, after}, {after, before}} {
				cmd := exec.Command(testenv.FunctionBinary(t), append([]string{"explain", "--fail-on", ""}, args...)...)
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				out, _ := cmd.Output()
				if code := cmd.ProcessState.ExitCode(); code != 2 {
					t.Errorf("exit %d, want 2:\n%s%s", code, out, stderr.String())
				}
				if !strings.Contains(stderr.String(), c.why) {
					t.Errorf("stderr lacks %q:\n%s", c.why, stderr.String())
				}
			}
		})
	}
}

// TestExplainForReviewTools: --format sarif follows the published SARIF
// schema, and --format github writes one workflow annotation per warning,
// an unacknowledged blocking one as an error.
func TestExplainForReviewTools(t *testing.T) {
	dir := example(t)
	before := render(t, filepath.Join(dir, "standalone"))
	after := render(t, scenarios["store-removed"](t, dir))
	out, code := runExplain(t, "--format", "sarif", before, after)
	if code != 1 {
		t.Errorf("exit %d, want 1 (the removal blocks)", code)
	}
	testenv.ValidSARIF(t, []byte(out))
	if !strings.Contains(out, `"ruleId": "store-removed"`) || !strings.Contains(out, `"level": "error"`) {
		t.Errorf("the SARIF lacks the blocking removal:\n%s", out)
	}
	gh, _ := runExplain(t, "--format", "github", before, after)
	if !strings.HasPrefix(gh, "::error file="+after+",title=store-removed::") {
		t.Errorf("the annotation:\n%s", gh)
	}
}

// TestWavesAloneChangeNothing: a render whose objects only gain or lose
// their sync waves (what upgrading to a glance-krm that places every
// object in a wave does) is explained as no change: no object "changes",
// no workload rolls. examples/generated: the generated set with every
// optional object.
func TestWavesAloneChangeNothing(t *testing.T) {
	dir := example(t)
	gen := filepath.Join(dir, "generated")
	after := render(t, gen)
	b, err := os.ReadFile(after)
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	waves := 0
	for _, l := range strings.SplitAfter(string(b), "\n") {
		if strings.Contains(l, "argocd.argoproj.io/sync-wave:") {
			waves++
			continue
		}
		kept = append(kept, l)
	}
	if waves < 10 {
		t.Fatalf("the render holds %d sync waves: not the render this test is about", waves)
	}
	before := filepath.Join(t.TempDir(), "before.yaml")
	if err := os.WriteFile(before, []byte(strings.Join(kept, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{before, after}, {after, before}} {
		out, code := runExplain(t, args...)
		if code != 0 || !strings.Contains(out, "(unchanged, release 2025.2)") || strings.Contains(out, "changes:") || strings.Contains(out, "rolls:") {
			t.Errorf("exit %d; waves alone must read as no change:\n%s", code, out)
		}
	}
}
