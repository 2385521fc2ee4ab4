//go:build e2e

// Package packaging_test checks the three doors users meet glance-krm
// through, each with the real tool: the container images (podman), the
// kustomize container mode, kpt, and the Argo CD config-management plugin.
// Run it with `make e2e-packaging`, which builds the images first.
package packaging_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/c5c3/glance-krm/internal/testenv"
)

const (
	root      = "../.."
	fnImage   = "ghcr.io/c5c3/glance-krm-fn"
	cmpImage  = "ghcr.io/c5c3/glance-krm-argocd-cmp"
	devTag    = ":dev"
	pinnedTag = ":v0.1.0" // the tag the examples reference
)

func mustEnv(t *testing.T, name string) string {
	t.Helper()
	return testenv.Env(t, name, "make e2e-packaging")
}

// containerEnv is the process environment plus podman's test-only settings
// (hack/containers/env.sh, sourced here the way the Makefile does).
func containerEnv(t *testing.T) []string {
	t.Helper()
	out, err := exec.Command("bash", "-c", "source "+filepath.Join(root, "hack/containers/env.sh")+" && env").Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(out)), "\n")
}

// run runs a command and returns stdout, stderr and its error.
func run(t *testing.T, env []string, dir, name string, args ...string) (string, string, error) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env, cmd.Dir = env, dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	return out.String(), errb.String(), err
}

func mustRun(t *testing.T, env []string, dir, name string, args ...string) string {
	t.Helper()
	out, stderr, err := run(t, env, dir, name, args...)
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, stderr)
	}
	return out
}

// tagPinned gives the freshly built image the tag the examples name, so
// nothing is pulled.
func tagPinned(t *testing.T, env []string, image string) {
	t.Helper()
	mustRun(t, env, "", "podman", "tag", image+devTag, image+pinnedTag)
}

// execOutput is the exec-mode build of examples/standalone: the reference
// every other door must reproduce byte for byte.
func execOutput(t *testing.T) string {
	t.Helper()
	return mustRun(t, os.Environ(), "", mustEnv(t, "KUSTOMIZE_BIN"), "build", "--enable-alpha-plugins", "--enable-exec",
		filepath.Join(root, "examples/standalone"))
}

// runWithStdin runs a command with the given standard input.
func runWithStdin(t *testing.T, stdin string, name string, args ...string) (string, string, error) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	return out.String(), errb.String(), err
}

// dockerShim writes, into dir, the `docker` kustomize calls for container
// functions: it execs podman with the same arguments.
func dockerShim(t *testing.T, dir string) {
	t.Helper()
	podman, err := exec.LookPath("podman")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "docker"), []byte("#!/bin/sh\nexec "+podman+" \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
}
