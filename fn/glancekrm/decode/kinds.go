package decode

import (
	"fmt"
	"strings"

	"github.com/kptdev/krm-functions-sdk/go/fn"

	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

// Annotations kustomize puts on the items it passes to a function: the
// first marks a kustomize build; the second lists the names an object had
// before namePrefix/nameSuffix renamed it earlier in the same build.
const (
	AnnotationKustomizeID   = "kustomize.config.k8s.io/id"
	annotationPreviousNames = "internal.config.kubernetes.io/previousNames"
)

// PreviousNames are the names kustomize renamed obj from, oldest first.
func PreviousNames(obj *fn.KubeObject) []string {
	v := obj.GetAnnotation(annotationPreviousNames)
	if v == "" {
		return nil
	}
	return strings.Split(v, ",")
}

// KindProblem spots an object meant for glance-krm that it would otherwise
// pass through without a word: a kind of our group it does not serve (a
// mis-cased kind, a ...List), or one of our kinds with no or a mis-spelt
// apiVersion.
func KindProblem(obj *fn.KubeObject) string {
	gk := obj.GroupKind()
	kind, apiVersion := obj.GetKind(), obj.GetAPIVersion()
	ours := ourKind(kind)
	switch {
	case gk.Group == v1alpha1.Group:
		if kind == v1alpha1.GlanceKind || kind == v1alpha1.GlanceBackendKind {
			return ""
		}
		if ours != "" && ours != kind {
			return fmt.Sprintf("kind %q is not served by %s: kinds are case-sensitive; did you mean %q?", kind, v1alpha1.Group, ours)
		}
		if strings.HasSuffix(kind, "List") {
			return fmt.Sprintf("kind %q is not read: a list is not an object of %s; write each item as its own YAML document", kind, v1alpha1.Group)
		}
		return fmt.Sprintf("kind %q is not a kind of %s (it serves %s and %s)", kind, v1alpha1.Group, v1alpha1.GlanceKind, v1alpha1.GlanceBackendKind)
	case ours == "":
		return ""
	case apiVersion == "":
		return fmt.Sprintf("%s %s has no apiVersion: set apiVersion: %s", kind, obj.GetName(), v1alpha1.APIVersion)
	case gk.Group == "" || strings.EqualFold(gk.Group, v1alpha1.Group):
		return fmt.Sprintf("%s %s has apiVersion %q: set apiVersion: %s", kind, obj.GetName(), apiVersion, v1alpha1.APIVersion)
	}
	return ""
}

// ourKind is the kind of ours that kind spells, ignoring case, or "".
func ourKind(kind string) string {
	for _, k := range []string{v1alpha1.GlanceKind, v1alpha1.GlanceBackendKind, v1alpha1.GlanceKind + "List", v1alpha1.GlanceBackendKind + "List"} {
		if strings.EqualFold(kind, k) {
			return k
		}
	}
	return ""
}
