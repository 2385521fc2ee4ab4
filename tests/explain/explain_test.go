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
