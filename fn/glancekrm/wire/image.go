package wire

import (
	"fmt"
	"strings"

	"github.com/c5c3/glance-krm/fn/glancekrm/ynode"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// mergeImage decides a container's image by a three-way merge of what the
// workload holds (cur), what the function set last time (recorded in the
// workload's annotation) and what it would set now (want):
//   - nothing there, or the image the function set last time: want (the
//     spec moved on, the workload did not);
//   - the spec did not move since the last run: keep cur (a change made
//     after the function, e.g. kustomize images: in an overlay, wins);
//   - a digest pin of want (same repository, a digest, the same tag or
//     none): keep it, so kustomize images: digest pins survive;
//   - anything else is a conflict between the workload and the spec,
//     refused with where each side comes from.
func mergeImage(rn *yaml.RNode, annotation string, c *yaml.RNode, what, want string) (string, error) {
	cur := ""
	if c != nil {
		cur = ynode.String(c, "image")
	}
	last := rn.GetAnnotations()[annotation]
	switch {
	case cur == "" || cur == want || cur == last:
		return want, nil
	case last != "" && last == want:
		return cur, nil
	case pinnedFrom(cur, want):
		return cur, nil
	}
	return "", fmt.Errorf("%s runs image %s, but glance-krm sets %s there (from %s): remove the image from the workload or make it equal; to mirror or pin it with kustomize images:, put images: in an overlay above the kustomization that runs glance-krm (kustomize applies a kustomization's own images: before its transformers)",
		what, cur, want, imageSource(annotation))
}

func imageSource(annotation string) string {
	if strings.HasSuffix(annotation, "credentials-image") {
		return "the functionConfig's credentialsImage"
	}
	return "the Glance's spec.image"
}

// pinnedFrom tells whether image pins want to a digest: same repository,
// a digest, and want's tag or no tag.
func pinnedFrom(image, want string) bool {
	name, tag, digest := splitImage(image)
	wname, wtag, _ := splitImage(want)
	return digest != "" && name == wname && (tag == "" || tag == wtag)
}

// splitImage splits repo[:tag][@digest]; a colon before the last slash is
// a registry port.
func splitImage(image string) (name, tag, digest string) {
	name, digest, _ = strings.Cut(image, "@")
	if i := strings.LastIndex(name, ":"); i > strings.LastIndex(name, "/") {
		name, tag = name[:i], name[i+1:]
	}
	return name, tag, digest
}
