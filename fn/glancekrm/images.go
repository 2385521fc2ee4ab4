package glancekrm

import (
	"fmt"
	"os"
	"strings"

	"github.com/c5c3/glance-krm/fn/findings"
	"github.com/c5c3/glance-krm/fn/glancekrm/kimages"
	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

// kustomizeImages reads, under kustomize, the images: of the kustomization
// that runs the function (its working directory) and maps the
// credentials image through them; without a kustomization there (kpt,
// kustomize's container mode, whose folder the function cannot see) there
// is nothing to follow.
func kustomizeImages(inv *inventory, cfg *config) []findings.Finding {
	if !inv.stateless {
		return nil
	}
	dir, err := os.Getwd()
	if err != nil {
		return nil
	}
	im, err := kimages.Read(dir)
	if err != nil {
		return []findings.Finding{findings.General(findings.Error, ruleImages, fmt.Sprintf("reading the images: of the kustomization that runs glance-krm: %v", err))}
	}
	if im == nil {
		return nil
	}
	cfg.images = im
	mapped, _, err := im.Apply(cfg.credentialsImage)
	if err != nil {
		return []findings.Finding{findings.General(findings.Error, ruleImages, err.Error())}
	}
	cfg.credentialsImage = mapped
	return nil
}

// ruleImages is the rule of what following a kustomization's images: finds.
const ruleImages = "kustomize-images"

// followImages maps the Glance's spec.image through the kustomization's
// images: (kustomize applied them to the input before the function ran,
// and would never see the image the function writes): the generated and
// wired workloads then run the image a kustomize user asked for. An
// image whose tag then names another release than openStackRelease is
// refused, as spec.image's own tag is.
func followImages(cfg config, ge *glanceEntry) []findings.Finding {
	g := ge.g
	ref := g.Spec.Image.Ref()
	mapped, changed, err := cfg.images.Apply(ref)
	if err != nil {
		return []findings.Finding{findings.About(ge.obj, findings.Error, ruleImages, err.Error())}
	}
	if !changed {
		return nil
	}
	if rel, ok := v1alpha1.ImageRelease(mapped); ok && rel != g.Spec.OpenStackRelease {
		r := findings.About(ge.obj, findings.Error, "image-release", fmt.Sprintf("%s: the images: of %s set the glance-api image %s to %s, whose tag names release %s, but spec.openStackRelease is %s: bump spec.image and spec.openStackRelease together",
			v1alpha1.ReasonImageReleaseMismatch, cfg.images.File, ref, mapped, rel, g.Spec.OpenStackRelease))
		return []findings.Finding{r.At("spec.image").Because(v1alpha1.ReasonImageReleaseMismatch)}
	}
	g.Spec.Image = splitRef(mapped)
	return []findings.Finding{findings.About(ge.obj, findings.Note, ruleImages, fmt.Sprintf("the glance-api image %s follows the images: of %s: %s", ref, cfg.images.File, mapped)).At("spec.image")}
}

// splitRef is an image reference as spec.image holds it.
func splitRef(ref string) v1alpha1.ImageSpec {
	name, digest, _ := strings.Cut(ref, "@")
	tag := ""
	if i := strings.LastIndex(name, ":"); i > strings.LastIndex(name, "/") {
		name, tag = name[:i], name[i+1:]
	}
	return v1alpha1.ImageSpec{Repository: name, Tag: tag, Digest: digest}
}
