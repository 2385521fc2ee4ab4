// Package explain_test runs `glance-krm-fn explain` on two renders of
// examples/standalone made with the real kustomize, one scenario per
// change a reviewer meets, in every format, and review/explain-pr.sh on a git
// repository.
package explain_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/c5c3/glance-krm/fn/explain"
	"github.com/c5c3/glance-krm/internal/testenv"
)

var update = flag.Bool("update", false, "rewrite testdata/ from the current output (then read the diff)")

var root = testenv.RepoRoot()

// example copies examples/ (standalone includes its resources by a
// relative path) with the function pointed at the built binary.
func example(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	fnBin := testenv.FunctionBinary(t)
	testenv.CopyTree(t, filepath.Join(root, "examples"), dir, func(_ string, b []byte) []byte {
		return bytes.ReplaceAll(b, []byte("../../bin/glance-krm-fn"), []byte(fnBin))
	})
	return dir
}

func render(t *testing.T, dir string) string {
	t.Helper()
	out, stderr, err := testenv.KustomizeBuild(t, dir)
	if err != nil {
		t.Fatalf("kustomize build %s: %v\n%s", dir, err, stderr)
	}
	file := filepath.Join(t.TempDir(), "render.yaml")
	if err := os.WriteFile(file, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

func edit(t *testing.T, file string, pairs ...string) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for i := 0; i < len(pairs); i += 2 {
		if !strings.Contains(s, pairs[i]) {
			t.Fatalf("%s has no %q", file, pairs[i])
		}
		s = strings.Replace(s, pairs[i], pairs[i+1], 1)
	}
	if err := os.WriteFile(file, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

const tertiary = `---
apiVersion: glance.openstack.c5c3.io/v1alpha1
kind: GlanceBackend
metadata:
  name: tertiary
  namespace: openstack
spec:
  glanceRef:
    name: glance
  type: S3
  s3:
    host: http://garage.shared-services.svc.cluster.local:3900
    bucket: glance-images-3
    credentialsSecretRef:
      name: garage-s3-credentials
`

// scenarios change examples/standalone (in the copy at dir) and return
// the kustomization to render after the change.
var scenarios = map[string]func(t *testing.T, dir string) string{
	"nothing": func(_ *testing.T, dir string) string { return filepath.Join(dir, "standalone") },
	"default-flip": func(t *testing.T, dir string) string {
		edit(t, filepath.Join(dir, "standalone/resources/backends.yaml"), "isDefault: true", "isDefault: X", "isDefault: false", "isDefault: true", "isDefault: X", "isDefault: false")
		return filepath.Join(dir, "standalone")
	},
	"store-added": func(t *testing.T, dir string) string {
		f := filepath.Join(dir, "standalone/resources/backends.yaml")
		b, _ := os.ReadFile(f)
		if err := os.WriteFile(f, append(b, tertiary...), 0o644); err != nil {
			t.Fatal(err)
		}
		return filepath.Join(dir, "standalone")
	},
	"store-removed": func(t *testing.T, dir string) string {
		f := filepath.Join(dir, "standalone/resources/backends.yaml")
		b, _ := os.ReadFile(f)
		first, _, _ := strings.Cut(string(b), "\n---\n")
		if err := os.WriteFile(f, []byte(first+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return filepath.Join(dir, "standalone")
	},
	"bucket-changed": func(t *testing.T, dir string) string {
		edit(t, filepath.Join(dir, "standalone/resources/backends.yaml"), "bucket: glance-images\n", "bucket: glance-images-new\n")
		return filepath.Join(dir, "standalone")
	},
	"region-changed": func(t *testing.T, dir string) string {
		edit(t, filepath.Join(dir, "standalone/resources/backends.yaml"), "region: garage", "region: garage-2")
		return filepath.Join(dir, "standalone")
	},
	"credentials-renamed": func(t *testing.T, dir string) string {
		f := filepath.Join(dir, "standalone/resources/backends.yaml")
		b, _ := os.ReadFile(f)
		first, second, _ := strings.Cut(string(b), "\n---\n")
		second = strings.Replace(second, "name: garage-s3-credentials", "name: garage-s3-credentials-2026", 1)
		if err := os.WriteFile(f, []byte(first+"\n---\n"+second), 0o644); err != nil {
			t.Fatal(err)
		}
		return filepath.Join(dir, "standalone")
	},
	// A later overlay pins an older release over a finished render: the
	// rendered options Zed's glance_store does not read.
	"release-pinned-older": func(t *testing.T, dir string) string {
		over := filepath.Join(dir, "zed")
		if err := os.MkdirAll(over, 0o755); err != nil {
			t.Fatal(err)
		}
		k := "resources: [../standalone]\npatches:\n  - target: {kind: Glance, name: glance}\n    patch: |\n      - op: replace\n        path: /spec/openStackRelease\n        value: \"2022.2\"\n"
		if err := os.WriteFile(filepath.Join(over, "kustomization.yaml"), []byte(k), 0o644); err != nil {
			t.Fatal(err)
		}
		return over
	},
	// The Glance leaves the render: renamed by an overlay's namePrefix.
	// glance-krm runs again in the overlay, as docs/doors.md asks for a
	// rename.
	"glance-renamed": func(t *testing.T, dir string) string {
		over := overlay(t, dir, "renamed", "resources: [../standalone]\nnamePrefix: new-\ntransformers: [glance-krm.yaml]\n")
		fnc := "apiVersion: fn.glance.openstack.c5c3.io/v1alpha1\nkind: RenderGlanceConfig\nmetadata:\n  name: glance-krm\n  annotations:\n    config.kubernetes.io/function: |\n      exec:\n        path: " + testenv.FunctionBinary(t) + "\n"
		if err := os.WriteFile(filepath.Join(over, "glance-krm.yaml"), []byte(fnc), 0o644); err != nil {
			t.Fatal(err)
		}
		return over
	},
	// The store keeps its bucket under another name: a new store id.
	"store-renamed": func(t *testing.T, dir string) string {
		edit(t, filepath.Join(dir, "standalone/resources/backends.yaml"), "  name: secondary\n", "  name: archive\n")
		return filepath.Join(dir, "standalone")
	},
	// http to https on the same host: the images' locations keep http.
	"host-scheme-changed": func(t *testing.T, dir string) string {
		edit(t, filepath.Join(dir, "standalone/resources/backends.yaml"), "host: http://garage", "host: https://garage")
		return filepath.Join(dir, "standalone")
	},
	// An overlay pins an older glance-api image while openStackRelease
	// stays: the pods would run 2025.1 on a 2025.2 schema.
	"image-downgraded": func(t *testing.T, dir string) string {
		return overlay(t, dir, "older-image", "resources: [../standalone]\nimages:\n  - name: ghcr.io/c5c3/glance\n    newTag: \"2025.1\"\n")
	},
	// show_image_direct_url turned on while locations hold the S3 keys.
	"direct-url-on": func(t *testing.T, dir string) string {
		edit(t, filepath.Join(dir, "standalone/resources/glance.yaml"), "  keystoneEndpoint: http://keystone.openstack.svc.cluster.local:5000/v3\n", "  keystoneEndpoint: http://keystone.openstack.svc.cluster.local:5000/v3\n  extraConfig:\n    DEFAULT:\n      show_image_direct_url: \"true\"\n")
		return filepath.Join(dir, "standalone")
	},
	// An option of glance-api.conf that is no store's: every change is shown.
	"option-changed": func(t *testing.T, dir string) string {
		edit(t, filepath.Join(dir, "standalone/resources/glance.yaml"), "  keystoneEndpoint: http://keystone.openstack.svc.cluster.local:5000/v3\n", "  keystoneEndpoint: http://keystone.openstack.svc.cluster.local:5000/v3\n  region: RegionTwo\n")
		return filepath.Join(dir, "standalone")
	},
	// 2025.2 to 2026.2 jumps over 2026.1.
	"release-skipped": func(t *testing.T, dir string) string {
		return overlay(t, dir, "skip", "resources: [../standalone]\npatches:\n  - target: {kind: Glance, name: glance}\n    patch: |\n      - op: replace\n        path: /spec/openStackRelease\n        value: \"2026.2\"\n      - op: replace\n        path: /spec/image/tag\n        value: \"2026.2\"\n")
	},
	// The next release: no warning about the path.
	"release-next": func(t *testing.T, dir string) string {
		return overlay(t, dir, "next", "resources: [../standalone]\npatches:\n  - target: {kind: Glance, name: glance}\n    patch: |\n      - op: replace\n        path: /spec/openStackRelease\n        value: \"2026.1\"\n      - op: replace\n        path: /spec/image/tag\n        value: \"2026.1\"\n")
	},
}

// overlay writes a kustomization above the example and returns its folder.
func overlay(t *testing.T, dir, name, kustomization string) string {
	t.Helper()
	over := filepath.Join(dir, name)
	if err := os.MkdirAll(over, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(over, "kustomization.yaml"), []byte(kustomization), 0o644); err != nil {
		t.Fatal(err)
	}
	return over
}

// want: the warning kinds each scenario shows (every other kind must be
// absent) and the exit code with the default --fail-on.
var want = map[string]struct {
	warnings []string
	exit     int
	lines    []string // in the text output
}{
	"nothing":      {exit: 0, lines: []string{"Glance openstack/glance (unchanged, release 2025.2)", "stays: Deployment/glance"}},
	"default-flip": {warnings: []string{explain.DefaultStoreChanged}, lines: []string{"default store (API default): primary -> secondary", "ConfigMap renamed: glance-config-", "keeps its name: Secret/glance-backends-", "rolls: Deployment/glance"}},
	"store-added":  {lines: []string{"store tertiary added", "Secret renamed: glance-backends-", "rolls: Deployment/glance"}},
	"store-removed": {warnings: []string{explain.StoreRemoved}, exit: 1,
		lines: []string{"store secondary removed", `store-removed: store "secondary" is removed`, "--acknowledge store-removed/openstack/glance/secondary"}},
	"bucket-changed": {warnings: []string{explain.StoreLocationChanged}, exit: 1,
		lines: []string{"store primary: s3_store_bucket glance-images -> glance-images-new", `store "primary" moves from bucket glance-images to glance-images-new: the images stored in it become unreachable`,
			"--acknowledge store-location-changed/openstack/glance/primary"}},
	"host-scheme-changed": {warnings: []string{explain.StoreLocationChanged}, exit: 1,
		lines: []string{"moves from host http://garage.shared-services.svc.cluster.local:3900 to https://garage.shared-services.svc.cluster.local:3900"}},
	"image-downgraded": {warnings: []string{explain.ReleaseDowngrade}, exit: 1,
		lines: []string{"the release the pods run goes down from 2025.2 to 2025.1", "the glance-api image of Deployment/glance, ghcr.io/c5c3/glance:2025.1, is of release 2025.1", "rolls: Deployment/glance"}},
	"direct-url-on": {warnings: []string{explain.LocationsLeakKeys}, exit: 1,
		lines: []string{"glance-api.conf [DEFAULT] show_image_direct_url: (none) -> true", "every store's keys leak to API users", "--acknowledge locations-leak-keys/openstack/glance/show_image_direct_url"}},
	"option-changed":      {lines: []string{"glance-api.conf [keystone_authtoken] region_name: (none) -> RegionTwo"}},
	"region-changed":      {lines: []string{"store primary: s3_store_region_name garage -> garage-2"}},
	"credentials-renamed": {warnings: []string{explain.CredentialsSecretRenamed}, lines: []string{`credentials Secret of store "secondary" changes from "garage-s3-credentials" to "garage-s3-credentials-2026"`}},
	"release-pinned-older": {warnings: []string{explain.UnknownOption, explain.ReleaseDowngrade}, exit: 1, lines: []string{"release: 2025.2 -> 2022.2",
		"openStackRelease goes down from 2025.2 to 2022.2", `option "s3_store_region_name" of store "primary" is not an option of an S3 store in Glance 2022.2`,
		"no longer read by 2022.2: [primary] s3_store_region_name"}},
	"glance-renamed": {warnings: []string{explain.GlanceRemoved}, exit: 1, lines: []string{"Glance openstack/glance (removed", "Glance openstack/new-glance (added",
		"Glance openstack/glance leaves the render", "--acknowledge glance-removed/openstack/glance"}},
	"store-renamed": {warnings: []string{explain.StoreRenamed}, exit: 1, lines: []string{"store renamed: secondary -> archive",
		`store "secondary" is renamed to "archive" (the same bucket glance-images-2`}},
	"release-skipped": {warnings: []string{explain.ReleaseSkipped, explain.UnknownOption}, exit: 1, lines: []string{"release: 2025.2 -> 2026.2", "jumps from 2025.2 to 2026.2 over 2026.1", "no longer read by 2026.2: [DEFAULT] http_keepalive"}},
	"release-next":    {lines: []string{"release: 2025.2 -> 2026.1"}},
}

func runExplain(t *testing.T, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(testenv.FunctionBinary(t), append([]string{"explain"}, args...)...)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return out.String(), 0
	case errors.As(err, &exit):
		return out.String() + stderr.String(), exit.ExitCode()
	}
	t.Fatal(err)
	return "", 0
}

func TestExplainScenarios(t *testing.T) {
	allKinds := explain.Kinds
	for name, change := range scenarios {
		t.Run(name, func(t *testing.T) {
			dir := example(t)
			before := render(t, filepath.Join(dir, "standalone"))
			after := render(t, change(t, dir))
			w := want[name]

			text, code := runExplain(t, before, after)
			if code != w.exit {
				t.Errorf("exit code %d, want %d:\n%s", code, w.exit, text)
			}
			for _, l := range w.lines {
				if !strings.Contains(text, l) {
					t.Errorf("the text output lacks %q:\n%s", l, text)
				}
			}
			js, _ := runExplain(t, "--format", "json", before, after)
			var report explain.Report
			if err := json.Unmarshal([]byte(js), &report); err != nil {
				t.Fatalf("json output: %v\n%s", err, js)
			}
			for _, kind := range allKinds {
				shown := slices.ContainsFunc(report.Warnings, func(x explain.Warning) bool { return x.Kind == kind })
				if shown != slices.Contains(w.warnings, kind) {
					t.Errorf("warning %s shown = %v, want %v: %+v", kind, shown, !shown, report.Warnings)
				}
			}
			md, _ := runExplain(t, "--format", "markdown", before, after)
			for _, w := range report.Warnings {
				if !strings.Contains(md, "> [!WARNING]") || !strings.Contains(md, w.Kind) {
					t.Errorf("the Markdown lacks warning %s:\n%s", w.Kind, md)
				}
			}
			golden(t, name, map[string]string{"txt": text, "md": md, "json": js}, dir)
		})
	}
}

// golden compares each format's output with testdata/<scenario>.<ext>;
// the temporary folder's path is replaced first.
func golden(t *testing.T, name string, outs map[string]string, tmp string) {
	t.Helper()
	for ext, out := range outs {
		out = strings.ReplaceAll(out, tmp, "<tmp>")
		file := filepath.Join("testdata", name+"."+ext)
		if *update {
			if err := os.MkdirAll("testdata", 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(file, []byte(out), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatalf("%v (go test ./tests/explain -update, then read the diff)", err)
		}
		if d := cmp.Diff(string(b), out); d != "" {
			t.Errorf("%s differs (-want +got):\n%s", file, d)
		}
	}
}

func TestAcknowledgedRemovalPasses(t *testing.T) {
	dir := example(t)
	before := render(t, filepath.Join(dir, "standalone"))
	after := render(t, scenarios["store-removed"](t, dir))
	out, code := runExplain(t, "--acknowledge", "store-removed/openstack/glance/secondary", before, after)
	if code != 0 || !strings.Contains(out, "[acknowledged]") {
		t.Errorf("acknowledged removal: exit %d\n%s", code, out)
	}
	if _, code := runExplain(t, "--fail-on", "", before, after); code != 0 {
		t.Errorf("--fail-on '' still blocks: exit %d", code)
	}
	bucket := example(t)
	b2 := render(t, filepath.Join(bucket, "standalone"))
	a2 := render(t, scenarios["bucket-changed"](t, bucket))
	if _, code := runExplain(t, "--fail-on", explain.StoreLocationChanged, b2, a2); code != 1 {
		t.Errorf("--fail-on store-location-changed: exit %d, want 1", code)
	}
	if _, code := runExplain(t, before); code != 2 {
		t.Errorf("one render only: exit %d, want 2", code)
	}
	if _, code := runExplain(t, before, filepath.Join(dir, "missing.yaml")); code != 2 {
		t.Errorf("a missing render: exit %d, want 2", code)
	}
}

// TestExplainNeverShowsCredentials: credential Secrets in the render (the
// example's test Secrets, made resources of the build here) never reach
// any output.
func TestExplainNeverShowsCredentials(t *testing.T) {
	dir := example(t)
	edit(t, filepath.Join(dir, "local-s3", "kustomization.yaml"), "resources:\n", "resources:\n  - test-credentials.yaml\n")
	before := render(t, filepath.Join(dir, "local-s3"))
	creds, err := os.ReadFile(filepath.Join(dir, "local-s3", "test-credentials.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	edit(t, filepath.Join(dir, "local-s3", "backends.yaml"), "isDefault: true", "isDefault: X", "isDefault: false", "isDefault: true", "isDefault: X", "isDefault: false")
	after := render(t, filepath.Join(dir, "local-s3"))
	var values []string
	for _, line := range strings.Split(string(creds), "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), ": "); ok && (strings.Contains(k, "secret-access-key") || k == "password") {
			values = append(values, strings.Trim(v, `"' `))
		}
	}
	if len(values) == 0 {
		t.Fatal("no credential values found in test-credentials.yaml")
	}
	for _, format := range []string{"text", "markdown", "json"} {
		out, _ := runExplain(t, "--format", format, before, after)
		for _, v := range values {
			if strings.Contains(out, v) {
				t.Errorf("the %s output holds a credential value", format)
			}
		}
	}
}

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

// TestExplainNeverShowsUserinfo: a URL's user:password@ appears in no
// format, wherever it sits (a store's host in a render the build would
// now refuse, written by an older glance-krm or by hand).
func TestExplainNeverShowsUserinfo(t *testing.T) {
	dir := example(t)
	before := render(t, filepath.Join(dir, "standalone"))
	b, err := os.ReadFile(before)
	if err != nil {
		t.Fatal(err)
	}
	const secret = "s3cr3t-in-the-url"
	withUser := strings.ReplaceAll(string(b), "s3_store_host = http://garage", "s3_store_host = http://AKIA:"+secret+"@garage")
	if withUser == string(b) {
		t.Fatal("the render has no s3_store_host to edit")
	}
	after := filepath.Join(t.TempDir(), "after.yaml")
	if err := os.WriteFile(after, []byte(withUser), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"text", "markdown", "json"} {
		for _, args := range [][]string{{before, after}, {after, before}} {
			out, _ := runExplain(t, append([]string{"--format", format}, args...)...)
			if strings.Contains(out, secret) || strings.Contains(out, "AKIA:") {
				t.Errorf("the %s output holds the userinfo:\n%s", format, out)
			}
			if !strings.Contains(out, "(hidden)@garage") {
				t.Errorf("the %s output does not show the host changing:\n%s", format, out)
			}
		}
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
