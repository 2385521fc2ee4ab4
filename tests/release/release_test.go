// Package release_test holds the release workflow, which cannot run here,
// to the local build it repeats: the same Go, platforms, cosign, scripts
// and image targets. tests/packaging runs those scripts for real.
package release_test

import (
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

const root = "../.."

type workflow struct {
	On struct {
		Push struct {
			Tags []string `yaml:"tags"`
		} `yaml:"push"`
	} `yaml:"on"`
	Permissions map[string]string `yaml:"permissions"`
	Jobs        map[string]struct {
		Steps []struct {
			Uses string            `yaml:"uses"`
			With map[string]string `yaml:"with"`
			Run  string            `yaml:"run"`
		} `yaml:"steps"`
	} `yaml:"jobs"`
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, path))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// makeVar is a Makefile variable's default (NAME ?= value).
func makeVar(t *testing.T, name string) string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^` + name + `\s*\?=\s*(.+)$`).FindStringSubmatch(read(t, "Makefile"))
	if m == nil {
		t.Fatalf("the Makefile sets no %s", name)
	}
	return strings.TrimSpace(m[1])
}

// targets are the images a script loops over ("for target in …").
func targets(t *testing.T, script string) []string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^for target in ([a-z -]+); do$`).FindStringSubmatch(read(t, script))
	if m == nil {
		t.Fatalf("%s has no `for target in …` loop", script)
	}
	return strings.Fields(m[1])
}

func TestReleaseWorkflowMatchesTheLocalBuild(t *testing.T) {
	var w workflow
	if err := yaml.Unmarshal([]byte(read(t, ".github/workflows/release.yml")), &w); err != nil {
		t.Fatalf(".github/workflows/release.yml: %v", err)
	}
	if !slices.Contains(w.On.Push.Tags, "v*") {
		t.Errorf("the workflow runs on tags %v, want v*", w.On.Push.Tags)
	}
	for perm, want := range map[string]string{"id-token": "write", "packages": "write", "contents": "write"} {
		if w.Permissions[perm] != want {
			t.Errorf("permissions.%s is %q, want %q (keyless signing, ghcr.io, the release)", perm, w.Permissions[perm], want)
		}
	}
	job, ok := w.Jobs["release"]
	if !ok {
		t.Fatal("no release job")
	}
	uses := map[string]map[string]string{}
	var run strings.Builder
	for _, s := range job.Steps {
		if s.Uses != "" {
			uses[strings.SplitN(s.Uses, "@", 2)[0]] = s.With
		}
		run.WriteString(s.Run + "\n")
	}
	if got, want := uses["actions/setup-go"]["go-version"], strings.TrimPrefix(runtime.Version(), "go"); got != want {
		t.Errorf("the workflow's Go is %q, the local build's %q", got, want)
	}
	if got, want := uses["sigstore/cosign-installer"]["cosign-release"], makeVar(t, "COSIGN_VERSION"); got != want {
		t.Errorf("the workflow's cosign is %q, the Makefile's COSIGN_VERSION %q", got, want)
	}
	steps := run.String()
	for _, want := range []string{
		`make image PLATFORMS="` + makeVar(t, "PLATFORMS") + `"`,
		"bash hack/release.sh ghcr.io/c5c3 ",
		"bash hack/release-manifests.sh ",
	} {
		if !strings.Contains(steps, want) {
			t.Errorf("no step runs %q", want)
		}
	}
	if strings.Contains(steps, "--key") {
		t.Error("the release signs with a key: it signs keyless, with the workflow's identity")
	}
	var stages []string
	for _, m := range regexp.MustCompile(`(?m)^FROM scratch AS ([a-z-]+)$`).FindAllStringSubmatch(read(t, "Dockerfile"), -1) {
		stages = append(stages, m[1])
	}
	if last := stages[len(stages)-1]; last != "fn" {
		t.Errorf("the Dockerfile's last stage is %s: a build with no flags must make the function's image", last)
	}
	for _, script := range []string{"hack/image.sh", "hack/release.sh"} {
		got := targets(t, script)
		if !slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(stages))) {
			t.Errorf("%s builds %v, the Dockerfile's stages are %v", script, got, stages)
		}
	}
}
