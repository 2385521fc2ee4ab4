package ocilayout

import (
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/random"
)

// A layout is read only as make image writes it: one image index.
func TestIndex(t *testing.T) {
	none := t.TempDir()
	if _, err := layout.Write(none, empty.Index); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Index(none); err == nil || !strings.Contains(err.Error(), "found 0 manifests") {
		t.Errorf("an empty layout: %v, want a refusal", err)
	}
	child, err := random.Index(64, 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	one := t.TempDir()
	p, err := layout.Write(one, empty.Index)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.AppendIndex(child); err != nil {
		t.Fatal(err)
	}
	_, digest, err := Index(one)
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := child.Digest(); digest != want {
		t.Errorf("digest %s, want the child index's %s", digest, want)
	}
}
