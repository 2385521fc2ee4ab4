package kimages

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

func kustomization(t *testing.T, body string) string {
	t.Helper()
	dir := t.TempDir()
	if body != "" {
		if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// The images: map a reference as kustomize maps a container's image.
func TestApply(t *testing.T) {
	dir := kustomization(t, "images:\n- name: ghcr.io/c5c3/glance\n  newName: mirror.example/glance\n- name: ghcr.io/c5c3/glance-krm-fn\n  digest: sha256:"+
		"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n")
	im, err := Read(dir)
	if err != nil || im == nil {
		t.Fatalf("Read: %v, %v", im, err)
	}
	for ref, want := range map[string]string{
		"ghcr.io/c5c3/glance:2025.2":        "mirror.example/glance:2025.2",
		"ghcr.io/c5c3/glance-krm-fn:v0.1.0": "ghcr.io/c5c3/glance-krm-fn@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
		"quay.io/other/image:1":             "quay.io/other/image:1",
	} {
		got, changed, err := im.Apply(ref)
		if err != nil || got != want || changed != (ref != want) {
			t.Errorf("%s: %s (changed %v, %v), want %s", ref, got, changed, err, want)
		}
	}
}

// No kustomization, or one without images:, is nothing to follow; a
// broken one is an error naming the file.
func TestRead(t *testing.T) {
	for name, body := range map[string]string{"no kustomization": "", "no images": "resources: [a.yaml]\n"} {
		if im, err := Read(kustomization(t, body)); im != nil || err != nil {
			t.Errorf("%s: %v, %v", name, im, err)
		}
	}
	dir := kustomization(t, "images: {not: a list}\n")
	if _, err := Read(dir); err == nil {
		t.Error("a broken kustomization was read")
	}
	var none *Images
	if got, changed, err := none.Apply("x:1"); got != "x:1" || changed || err != nil {
		t.Error("nil Images change a reference")
	}
}

func ExampleImages_Apply() {
	dir, _ := os.MkdirTemp("", "kimages")
	defer func() { _ = os.RemoveAll(dir) }()
	_ = os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte("images:\n- name: ghcr.io/c5c3/glance\n  newTag: \"2026.1\"\n"), 0o644)
	im, _ := Read(dir)
	out, changed, _ := im.Apply("ghcr.io/c5c3/glance:2025.2")
	fmt.Println(out, changed)
	// Output: ghcr.io/c5c3/glance:2026.1 true
}
