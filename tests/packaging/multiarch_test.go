//go:build e2e

package packaging_test

import (
	"archive/tar"
	"bytes"
	"debug/elf"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"

	"github.com/c5c3/glance-krm/internal/ocilayout"
)

// platforms every image is built for (the Makefile's PLATFORMS), with the
// ELF machine its binaries must be for.
var platforms = map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}

// shipped is every image `make image` writes as an OCI layout under
// build/oci/, with the files each platform's image must hold, the user it
// runs as and its entrypoint.
var shipped = []struct {
	target, user string
	files        []string
	entrypoint   []string
}{
	{target: "fn", user: "65532:65532", files: []string{"etc/group", "etc/passwd", "usr/local/bin/glance-krm-fn"},
		entrypoint: []string{"/usr/local/bin/glance-krm-fn"}},
	{target: "controller", user: "65532:65532", files: []string{"etc/group", "etc/passwd", "usr/local/bin/glance-krm-controller"},
		entrypoint: []string{"/usr/local/bin/glance-krm-controller"}},
	{target: "argocd-cmp", user: "999:999", files: []string{"bin/busybox", "etc/group", "etc/passwd",
		"home/argocd/cmp-server/config/plugin.yaml", "usr/local/bin/glance-krm-fn", "usr/local/bin/kustomize"}},
}

// index is the one image index build/oci/<target> holds (the layout's
// index.json names it by its tag), and its digest.
func index(t *testing.T, target string) (v1.ImageIndex, v1.Hash) {
	t.Helper()
	idx, digest, err := ocilayout.Index(filepath.Join(root, "build", "oci", target))
	if err != nil {
		t.Fatalf("%v (make image writes it)", err)
	}
	return idx, digest
}

// images are an index's images by architecture; every manifest must be an
// OCI image for linux, each architecture once.
func images(t *testing.T, idx v1.ImageIndex) map[string]v1.Image {
	t.Helper()
	m, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if m.MediaType != "application/vnd.oci.image.index.v1+json" {
		t.Errorf("the index is %s, want an OCI image index", m.MediaType)
	}
	out := map[string]v1.Image{}
	for _, d := range m.Manifests {
		if d.Platform == nil || d.Platform.OS != "linux" || d.MediaType != "application/vnd.oci.image.manifest.v1+json" {
			t.Errorf("manifest %s: %s for %v, want an OCI image manifest for linux", d.Digest, d.MediaType, d.Platform)
			continue
		}
		if _, dup := out[d.Platform.Architecture]; dup {
			t.Errorf("two images for %s", d.Platform.Architecture)
		}
		img, err := idx.Image(d.Digest)
		if err != nil {
			t.Fatal(err)
		}
		out[d.Platform.Architecture] = img
	}
	return out
}

// files reads an image's flattened file system: regular files' contents
// by path (no leading slash), symlinks as "-> target".
func files(t *testing.T, img v1.Image) map[string][]byte {
	t.Helper()
	rc := mutate.Extract(img)
	defer func() { _ = rc.Close() }()
	out := map[string][]byte{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimPrefix(filepath.Clean("/"+h.Name), "/")
		switch h.Typeflag {
		case tar.TypeReg:
			b, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			out[name] = b
		case tar.TypeSymlink:
			out[name] = []byte("-> " + h.Linkname)
		}
	}
}

// TestImageIndexes holds every shipped image to what `make image` promises:
// one OCI image index per image with linux/amd64 and linux/arm64, each
// image with its files, user and entrypoint, every binary built for its
// platform and static (a scratch image has no loader), the function's and
// controller's bytes those `make build`/`build-cross` wrote, and the
// index's digest the one hack/image.sh recorded.
func TestImageIndexes(t *testing.T) {
	for _, s := range shipped {
		t.Run(s.target, func(t *testing.T) {
			idx, digest := index(t, s.target)
			recorded, err := os.ReadFile(filepath.Join(root, "build", "oci", s.target+".digest"))
			if err != nil {
				t.Fatal(err)
			}
			if strings.TrimSpace(string(recorded)) != digest.String() {
				t.Errorf("build/oci/%s.digest says %s, the layout holds %s", s.target, recorded, digest)
			}
			byArch := images(t, idx)
			if got := slices.Sorted(func(yield func(string) bool) {
				for a := range byArch {
					if !yield(a) {
						return
					}
				}
			}); !slices.Equal(got, []string{"amd64", "arm64"}) {
				t.Fatalf("the index holds %v, want amd64 and arm64", got)
			}
			for arch, img := range byArch {
				cfg, err := img.ConfigFile()
				if err != nil {
					t.Fatal(err)
				}
				if cfg.OS != "linux" || cfg.Architecture != arch {
					t.Errorf("%s: the image's config says %s/%s", arch, cfg.OS, cfg.Architecture)
				}
				if cfg.Config.User != s.user || !slices.Equal(cfg.Config.Entrypoint, s.entrypoint) {
					t.Errorf("%s: user %q entrypoint %q, want %q %q", arch, cfg.Config.User, cfg.Config.Entrypoint, s.user, s.entrypoint)
				}
				fs := files(t, img)
				var names []string
				for name, b := range fs {
					if bytes.HasPrefix(b, []byte("-> ")) {
						continue
					}
					names = append(names, name)
					if bytes.HasPrefix(b, []byte("\x7fELF")) {
						checkELF(t, arch, name, b)
					}
				}
				slices.Sort(names)
				if diff := cmp.Diff(s.files, names); diff != "" {
					t.Errorf("%s: the image's files (-want +got):\n%s", arch, diff)
				}
				for _, bin := range []string{"glance-krm-fn", "glance-krm-controller"} {
					b, ok := fs["usr/local/bin/"+bin]
					if !ok {
						continue
					}
					built, err := os.ReadFile(filepath.Join(root, "bin", "linux_"+arch, bin))
					if err != nil {
						t.Fatal(err)
					}
					if !bytes.Equal(b, built) {
						t.Errorf("%s: the image's %s is not bin/linux_%s/%s", arch, bin, arch, bin)
					}
				}
			}
			t.Logf("%s: %s", s.target, digest)
		})
	}
}

// checkELF: built for the image's platform, and static.
func checkELF(t *testing.T, arch, name string, b []byte) {
	t.Helper()
	f, err := elf.NewFile(bytes.NewReader(b))
	if err != nil {
		t.Errorf("%s: %s: %v", arch, name, err)
		return
	}
	if f.Machine != platforms[arch] {
		t.Errorf("%s: %s is built for %s", arch, name, f.Machine)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("%s: %s needs a program interpreter: a scratch image has none", arch, name)
		}
	}
}

// TestArm64UnderQemu runs the arm64 images' binaries, taken out of the
// images, under qemu-user (Debian's qemu-user-static, invoked by name: no
// binfmt_misc registration, so one process each): the function renders
// every exec-mode example byte for byte as the amd64 build does, and the
// controller, the sidecar's kustomize and its busybox start.
func TestArm64UnderQemu(t *testing.T) {
	qemu := mustEnv(t, "QEMU_AARCH64")
	arm64 := func(target, file string) string {
		idx, _ := index(t, target)
		fs := files(t, images(t, idx)["arm64"])
		b, ok := fs[file]
		if !ok {
			t.Fatalf("the arm64 %s image has no %s", target, file)
		}
		p := filepath.Join(t.TempDir(), filepath.Base(file))
		if err := os.WriteFile(p, b, 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}

	// A copy of examples/ whose ../../bin/glance-krm-fn hands the arm64
	// function to the emulator.
	repo := t.TempDir()
	if err := os.CopyFS(filepath.Join(repo, "examples"), os.DirFS(filepath.Join(root, "examples"))); err != nil {
		t.Fatal(err)
	}
	wrapper := "#!/bin/sh\nexec " + qemu + " " + arm64("fn", "usr/local/bin/glance-krm-fn") + " \"$@\"\n"
	if err := os.MkdirAll(filepath.Join(repo, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(repo, "bin", "glance-krm-fn"), []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	kustomize := mustEnv(t, "KUSTOMIZE_BIN")
	examples, err := filepath.Glob(filepath.Join(root, "examples", "*", "glance-krm.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	rendered := 0
	for _, cfg := range examples {
		name := filepath.Base(filepath.Dir(cfg))
		if b, err := os.ReadFile(cfg); err != nil || !strings.Contains(string(b), "path: ../../bin/glance-krm-fn") {
			continue // container mode: the doors' tests run it
		}
		t.Run(name, func(t *testing.T) {
			build := func(dir string) (string, bool) {
				out, _, err := run(t, os.Environ(), "", kustomize, "build", "--enable-alpha-plugins", "--enable-exec", dir)
				return out, err == nil
			}
			want, wantOK := build(filepath.Join(root, "examples", name))
			got, gotOK := build(filepath.Join(repo, "examples", name))
			if gotOK != wantOK {
				t.Fatalf("amd64 passed: %v, arm64 passed: %v", wantOK, gotOK)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("arm64 under qemu differs from amd64 (-amd64 +arm64):\n%s", diff)
			}
			if wantOK && strings.Contains(want, "glance-backends-") {
				rendered++
			}
		})
	}
	if rendered < 5 {
		t.Errorf("%d examples rendered a Glance under both architectures, want every exec-mode example (5 or more)", rendered)
	}

	for _, c := range []struct {
		target, file string
		args         []string
		says         string
	}{
		{"controller", "usr/local/bin/glance-krm-controller", []string{"--help"}, "-leader-elect"},
		{"argocd-cmp", "usr/local/bin/kustomize", []string{"version"}, "v5."},
		{"argocd-cmp", "bin/busybox", []string{"sh", "-c", "echo \"$((6 * 7)) from $(uname -m)\""}, "42 from aarch64"},
	} {
		out, stderr, err := run(t, os.Environ(), "", qemu, append([]string{arm64(c.target, c.file)}, c.args...)...)
		if err != nil || !strings.Contains(out+stderr, c.says) {
			t.Errorf("arm64 %s %v under qemu: %v, want %q in\n%s%s", c.file, c.args, err, c.says, out, stderr)
		}
	}
}
