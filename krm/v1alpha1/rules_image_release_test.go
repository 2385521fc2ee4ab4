package v1alpha1

import (
	"strings"
	"testing"
)

func TestImageRelease(t *testing.T) {
	for ref, want := range map[string]string{
		"ghcr.io/c5c3/glance:2025.2":                            "2025.2",
		"ghcr.io/c5c3/glance:2026.1-p1":                         "2026.1",
		"registry:5000/glance:2025.1-20261103":                  "2025.1",
		"glance:2025.2@sha256:" + strings.Repeat("a", 64):       "2025.2",
		"registry:5000/glance":                                  "",
		"ghcr.io/c5c3/glance:latest":                            "",
		"ghcr.io/c5c3/glance:2025.2.1":                          "",
		"ghcr.io/c5c3/glance:2025.3":                            "",
		"ghcr.io/c5c3/glance:v2025.2":                           "",
		"ghcr.io/c5c3/glance@sha256:" + strings.Repeat("b", 64): "",
	} {
		got, ok := ImageRelease(ref)
		if got != want || ok != (want != "") {
			t.Errorf("ImageRelease(%q) = %q, %v; want %q", ref, got, ok, want)
		}
	}
}

func TestValidateImageRelease(t *testing.T) {
	g := func(tag, digest, release string) *Glance {
		return &Glance{Spec: GlanceSpec{OpenStackRelease: release, Image: ImageSpec{Repository: "ghcr.io/c5c3/glance", Tag: tag, Digest: digest}}}
	}
	for name, c := range map[string]struct {
		g         *Glance
		err, warn string
	}{
		"the tag names the release":      {g: g("2025.2", "", "2025.2")},
		"a build of the release":         {g: g("2026.1-p1", "", "2026.1")},
		"the tag names another release":  {g: g("2025.1", "", "2025.2"), err: "spec.image.tag names release 2025.1 but spec.openStackRelease is 2025.2"},
		"a newer image than the release": {g: g("2026.1-20261103", "", "2025.2"), err: "ImageReleaseMismatch"},
		"a tag naming no release":        {g: g("latest", "", "2025.2"), warn: `spec.image.tag "latest" names no release`},
		"a digest pin names no release":  {g: g("", "sha256:"+strings.Repeat("c", 64), "2025.2"), warn: "pinned by digest"},
	} {
		t.Run(name, func(t *testing.T) {
			errs, warn := ValidateImageRelease(c.g)
			if (c.err == "") != (len(errs) == 0) || (c.err != "" && !strings.Contains(errs.ToAggregate().Error(), c.err)) {
				t.Errorf("errors %v, want %q", errs, c.err)
			}
			if len(errs) > 0 && errs[0].Field != "spec.image.tag" {
				t.Errorf("field %s, want spec.image.tag", errs[0].Field)
			}
			if (c.warn == "") != (warn == "") || !strings.Contains(warn, c.warn) {
				t.Errorf("warning %q, want %q", warn, c.warn)
			}
		})
	}
}
