package v1alpha1

import (
	"fmt"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// spec.image and spec.openStackRelease are separate fields (a digest pin
// has no release in it), but every Job and pod runs spec.image while the
// rendered options, the release catalogs and the upgrade path follow
// spec.openStackRelease: an image of another release would run with
// options its Glance does not read, and glance-manage of that release
// against the schema. So a tag naming a release must name this one (the
// seed's bump-in-lockstep contract, its ImageReleaseMismatch).

// releaseTag is a tag naming a release: the series, alone or followed by
// a dash and anything (2025.2, 2025.2-20261103, 2026.1-p1).
var releaseTag = regexp.MustCompile(`^(\d{4}\.[12])(-.*)?$`)

// ImageRelease is the release an image reference's tag names; ok is false
// when it has no tag, or a tag that names none.
func ImageRelease(ref string) (release string, ok bool) {
	ref, _, _ = strings.Cut(ref, "@")
	i := strings.LastIndex(ref, ":")
	if i < 0 || strings.Contains(ref[i:], "/") {
		return "", false
	}
	m := releaseTag.FindStringSubmatch(ref[i+1:])
	if m == nil {
		return "", false
	}
	return m[1], true
}

// ValidateImageRelease is the image-release rule on a Glance: an error
// when spec.image.tag names a release other than spec.openStackRelease;
// a warning (unchecked) when the image names no release to check.
func ValidateImageRelease(g *Glance) (errs field.ErrorList, unchecked string) {
	img := g.Spec.Image
	if img.Tag == "" {
		return nil, fmt.Sprintf("spec.image is pinned by digest (%s), which names no release: that it runs openStackRelease %s cannot be checked", img.Ref(), g.Spec.OpenStackRelease)
	}
	rel, ok := ImageRelease(img.Ref())
	if !ok {
		return nil, fmt.Sprintf("spec.image.tag %q names no release (a tag like %s or %s-<build>): that the image runs openStackRelease %s cannot be checked", img.Tag, g.Spec.OpenStackRelease, g.Spec.OpenStackRelease, g.Spec.OpenStackRelease)
	}
	if rel != g.Spec.OpenStackRelease {
		return field.ErrorList{field.Invalid(field.NewPath("spec", "image", "tag"), img.Tag, fmt.Sprintf(
			"ImageReleaseMismatch: spec.image.tag names release %s but spec.openStackRelease is %s: the pods and the glance-manage Jobs would run %s with the options and the upgrade path of %s; bump spec.image and spec.openStackRelease together",
			rel, g.Spec.OpenStackRelease, rel, g.Spec.OpenStackRelease))}, ""
	}
	return nil, ""
}
