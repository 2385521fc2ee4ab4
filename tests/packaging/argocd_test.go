//go:build e2e

package packaging_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/c5c3/glance-krm/internal/testenv"
)

// cmpConfig is Argo CD's ConfigManagementPlugin (CMP v2) configuration as
// the sidecar's argocd-cmp-server reads it; decoding is strict, so a
// misspelt field fails here instead of being ignored there.
type cmpConfig struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		Version  string     `json:"version"`
		Init     cmpCommand `json:"init"`
		Generate cmpCommand `json:"generate"`
		Discover struct {
			FileName string `json:"fileName"`
			Find     struct {
				cmpCommand
				Glob string `json:"glob"`
			} `json:"find"`
		} `json:"discover"`
		Parameters       map[string]any `json:"parameters"`
		AllowConcurrency bool           `json:"allowConcurrency"`
		LockRepo         bool           `json:"lockRepo"`
		PreserveFileMode bool           `json:"preserveFileMode"`
		ProvideGitCreds  bool           `json:"provideGitCreds"`
	} `json:"spec"`
}

type cmpCommand struct {
	Command []string `json:"command"`
	Args    []string `json:"args"`
}

func (c cmpCommand) argv() []string { return append(append([]string{}, c.Command...), c.Args...) }

func readPlugin(t *testing.T) cmpConfig {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(root, "examples/argocd/plugin.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	js, err := yaml.YAMLToJSON(raw)
	if err != nil {
		t.Fatal(err)
	}
	var c cmpConfig
	strict, err := sigsjson.UnmarshalStrict(js, &c)
	if err != nil || len(strict) > 0 {
		t.Fatalf("plugin.yaml is not a CMP v2 configuration: %v %v", err, strict)
	}
	return c
}

// TestPluginConfigIsValid applies argocd-cmp-server's own checks.
func TestPluginConfigIsValid(t *testing.T) {
	c := readPlugin(t)
	switch {
	case c.APIVersion != "argoproj.io/v1alpha1" || c.Kind != "ConfigManagementPlugin":
		t.Errorf("apiVersion/kind %s/%s", c.APIVersion, c.Kind)
	case c.Metadata.Name == "":
		t.Error("metadata.name is empty")
	case len(c.Spec.Generate.Command) == 0:
		t.Error("spec.generate.command is empty")
	case c.Spec.Discover.FileName == "" && c.Spec.Discover.Find.Glob == "" && len(c.Spec.Discover.Find.Command) == 0:
		t.Error("spec.discover has neither fileName, find.glob nor find.command")
	}
	if c.Metadata.Name+"-"+c.Spec.Version != "glance-krm-v1" {
		t.Errorf("applications name the plugin glance-krm-v1, the config says %s-%s", c.Metadata.Name, c.Spec.Version)
	}
	app, err := os.ReadFile(filepath.Join(root, "examples/argocd/application.yaml"))
	if err != nil || !strings.Contains(string(app), "name: glance-krm-v1") {
		t.Errorf("examples/argocd/application.yaml does not use the plugin: %v", err)
	}
}

// checkout lays out the repository as the sidecar receives it: files 0644
// (preserveFileMode is off), directories owned by the sidecar's user.
func checkout(t *testing.T, flipBothDefault bool) string {
	t.Helper()
	repo := t.TempDir()
	for _, dir := range []string{"examples/argocd", "examples/standalone/resources"} {
		testenv.CopyTree(t, filepath.Join(root, dir), filepath.Join(repo, dir), func(path string, b []byte) []byte {
			if flipBothDefault && path == "backends.yaml" {
				return bytes.ReplaceAll(b, []byte("isDefault: false"), []byte("isDefault: true"))
			}
			return b
		})
	}
	_ = filepath.WalkDir(repo, func(path string, d os.DirEntry, err error) error {
		if err == nil {
			_ = os.Chown(path, 999, 999)
		}
		return nil
	})
	return repo
}

// sidecarEnv is what argocd-cmp-server gives the plugin's commands.
var sidecarEnv = []string{
	"ARGOCD_APP_NAME=glance", "ARGOCD_APP_NAMESPACE=openstack", "ARGOCD_APP_REVISION=0123456789abcdef",
	"ARGOCD_APP_SOURCE_PATH=examples/argocd/app", "ARGOCD_APP_SOURCE_REPO_URL=https://github.com/c5c3/glance-krm.git",
	"ARGOCD_APP_SOURCE_TARGET_REVISION=main", "KUBE_VERSION=1.37.2", "KUBE_API_VERSIONS=v1,apps/v1",
	"ARGOCD_ENV_EXAMPLE=1",
}

// generate runs init and generate as the sidecar would, on this machine:
// in the app path, with those variables and a PATH holding what the
// sidecar image holds (kustomize, glance-krm-fn, a shell).
func generate(t *testing.T, repo string) (string, string, error) {
	return generateIn(t, repo, "examples/argocd/app")
}

func generateIn(t *testing.T, repo, appPath string) (string, string, error) {
	t.Helper()
	c := readPlugin(t)
	bin := t.TempDir()
	for name, target := range map[string]string{"kustomize": mustEnv(t, "KUSTOMIZE_BIN"), "glance-krm-fn": mustEnv(t, "GLANCE_KRM_FN")} {
		if err := os.Symlink(target, filepath.Join(bin, name)); err != nil {
			t.Fatal(err)
		}
	}
	env := append([]string{"PATH=" + bin + ":/usr/bin:/bin", "HOME=" + t.TempDir()}, sidecarEnv...)
	app := filepath.Join(repo, appPath)
	if _, err := os.Stat(filepath.Join(app, c.Spec.Discover.FileName)); err != nil {
		t.Fatalf("discovery: argocd-cmp-server would refuse %s, which has no %s", appPath, c.Spec.Discover.FileName)
	}
	if initArgv := c.Spec.Init.argv(); len(initArgv) > 0 {
		if _, stderr, err := run(t, env, app, initArgv[0], initArgv[1:]...); err != nil {
			t.Fatalf("init: %v\n%s", err, stderr)
		}
	}
	argv := c.Spec.Generate.argv()
	return run(t, env, app, argv[0], argv[1:]...)
}

// TestPluginGenerate: stdout is exactly the manifests the exec-mode build
// renders, and nothing else.
func TestPluginGenerate(t *testing.T) {
	out, stderr, err := generate(t, checkout(t, false))
	if err != nil {
		t.Fatalf("generate: %v\n%s", err, stderr)
	}
	if diff := cmp.Diff(execOutput(t), out); diff != "" {
		t.Errorf("generate's stdout differs from the exec-mode build (-exec +plugin):\n%s", diff)
	}
}

// TestPluginGenerateWithTransformerInBase: an app whose kustomization
// includes a base that declares the transformer renders too (the binary is
// found on PATH, not linked into one directory), and equals the direct
// build; the app keeps glance-krm.yaml for discovery only.
func TestPluginGenerateWithTransformerInBase(t *testing.T) {
	repo := checkout(t, false)
	app := filepath.Join(repo, "examples/argocd/app")
	overlay := filepath.Join(repo, "examples/argocd/overlay")
	if err := os.MkdirAll(overlay, 0o755); err != nil {
		t.Fatal(err)
	}
	fnConfig, err := os.ReadFile(filepath.Join(app, "glance-krm.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{
		"glance-krm.yaml":    string(fnConfig),
		"kustomization.yaml": "resources: [../app]\n",
	} {
		if err := os.WriteFile(filepath.Join(overlay, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, stderr, err := generateIn(t, repo, "examples/argocd/overlay")
	if err != nil {
		t.Fatalf("generate: %v\n%s", err, stderr)
	}
	if diff := cmp.Diff(execOutput(t), out); diff != "" {
		t.Errorf("generate's stdout differs from the exec-mode build (-exec +plugin):\n%s", diff)
	}
}

func TestPluginGenerateFailsOnTwoDefaults(t *testing.T) {
	out, stderr, err := generate(t, checkout(t, true))
	if err == nil {
		t.Fatalf("generate succeeded with two defaults:\n%s", out)
	}
	for _, want := range []string{"NoDefaultBackend", "exactly one default store is allowed"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if strings.Contains(out, "kind:") {
		t.Errorf("a failed generate printed manifests:\n%s", out)
	}
}

// TestPluginInSidecarImage runs init and generate inside the sidecar image
// itself (podman), as the sidecar's user, on the same checkout.
//
// The image is pulled by digest from the loopback registry, as an Argo CD
// node pulls the sidecar's image.
func TestPluginInSidecarImage(t *testing.T) {
	ref := pushed(t, "argocd-cmp")
	env := pullEnv(t, ref)
	c := readPlugin(t)
	repo := checkout(t, false)
	script := shellQuote(c.Spec.Generate.argv())
	if initArgv := c.Spec.Init.argv(); len(initArgv) > 0 {
		script = shellQuote(initArgv) + " && " + script
	}
	args := []string{"run", "--rm", "--network", "none", "--user", "999:999", "-v", repo + ":/tmp/repo",
		"-w", "/tmp/repo/examples/argocd/app"}
	for _, e := range sidecarEnv {
		args = append(args, "-e", e)
	}
	args = append(args, "--entrypoint", "/bin/sh", ref, "-c", script)
	out, stderr, err := run(t, env, "", "podman", args...)
	if err != nil {
		t.Fatalf("podman run: %v\n%s", err, stderr)
	}
	wasPulled(t, env, ref)
	if diff := cmp.Diff(execOutput(t), out); diff != "" {
		t.Errorf("the sidecar image's output differs from the exec-mode build (-exec +sidecar):\n%s", diff)
	}
}

func shellQuote(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}
