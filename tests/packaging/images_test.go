//go:build e2e

package packaging_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/c5c3/glance-krm/internal/testenv"
)

// maxFunctionImage: the function carries the API server's own schema and
// CEL validators (k8s.io/apiextensions-apiserver) so that every rule of the
// CRDs holds at build time as on admission; that took it from 10.8 MB to
// 23.4 MB. `validate` builds a kustomization as kustomize does, with
// kustomize's own krusty in-process (and the function maps spec.image
// through kustomize's image filter): 27.4 MB. The budget keeps the next
// dependency from riding in unnoticed.
const maxFunctionImage = 29 << 20

func TestFunctionImage(t *testing.T) {
	env := containerEnv(t)
	size, err := strconv.Atoi(strings.TrimSpace(mustRun(t, env, "", "podman", "image", "inspect", "--format", "{{.Size}}", fnImage+devTag)))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("function image %s: %.1f MB", fnImage+devTag, float64(size)/1e6)
	if size > maxFunctionImage {
		t.Errorf("function image is %d bytes, more than %d", size, maxFunctionImage)
	}
	// kustomize runs container functions as --user nobody: the image must
	// know that user, and has no shell to fall back on.
	out, stderr, err := run(t, env, "", "podman", "run", "--rm", "-i", "--network", "none", "--user", "nobody",
		"--entrypoint", "/bin/sh", fnImage+devTag, "-c", "true")
	if err == nil {
		t.Errorf("the function image has a shell: %s", out)
	}
	t.Logf("no shell, as intended: %s", strings.TrimSpace(stderr))
}

// TestKustomizeContainerModeEqualsExecMode runs the real kustomize on the
// container-mode example with a `docker` on PATH that execs podman, as
// kustomize calls `docker run --rm -i -a STDIN -a STDOUT -a STDERR
// --network none --user nobody ...`; its output must equal exec mode's.
//
// The image is pulled by digest from the loopback registry, as a user pins
// it: the example's tag is replaced by the pushed index's digest.
func TestKustomizeContainerModeEqualsExecMode(t *testing.T) {
	ref := pushed(t, "fn")
	env := pullEnv(t, ref)
	shim := t.TempDir()
	dockerShim(t, shim)
	env = append(env, "PATH="+shim+":"+os.Getenv("PATH"))
	examples := filepath.Join(t.TempDir(), "examples")
	for _, dir := range []string{"standalone", "standalone-container"} {
		testenv.CopyTree(t, filepath.Join(root, "examples", dir), filepath.Join(examples, dir), func(path string, b []byte) []byte {
			if path != "glance-krm.yaml" || dir != "standalone-container" {
				return b
			}
			if !bytes.Contains(b, []byte("image: "+fnImage+pinnedTag)) {
				t.Fatalf("examples/standalone-container no longer runs %s", fnImage+pinnedTag)
			}
			return bytes.Replace(b, []byte("image: "+fnImage+pinnedTag), []byte("image: "+ref), 1)
		})
	}
	got := mustRun(t, env, "", mustEnv(t, "KUSTOMIZE_BIN"), "build", "--enable-alpha-plugins", filepath.Join(examples, "standalone-container"))
	wasPulled(t, env, ref)
	t.Logf("kustomize ran %s", ref)
	if diff := cmp.Diff(execOutput(t), got); diff != "" {
		t.Errorf("container mode differs from exec mode (-exec +container):\n%s", diff)
	}
	if !strings.Contains(got, "glance-backends-") {
		t.Error("container mode rendered nothing")
	}
	want, err := os.ReadFile(filepath.Join(root, "examples/standalone-container/.expected/output.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("container mode differs from the example's expected output (-expected +container):\n%s", diff)
	}
}
