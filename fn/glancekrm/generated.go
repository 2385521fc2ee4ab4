package glancekrm

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"

	"github.com/kptdev/krm-functions-sdk/go/fn"

	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

// HistoryLimit is how many generated copies of each kind are kept per
// Glance, the current one included: the contract's rollback history. It
// matters under kpt, whose package keeps what the function wrote; under
// kustomize and Argo CD, git history is the rollback.
const HistoryLimit = 3

// rendered is one generated object before it becomes YAML.
type rendered struct {
	glance    *v1alpha1.Glance
	component string // v1alpha1.ComponentBackends or ComponentConfig
	key       string // the data key: backends.conf or glance-api.conf
	content   string
}

func (r rendered) kind() string {
	if r.component == v1alpha1.ComponentBackends {
		return "Secret"
	}
	return "ConfigMap"
}

// name is <glance>-<component>-<hash>. The hash covers the content only, so
// the name changes exactly when what glance-api reads changes.
func (r rendered) name() string {
	sum := sha256.Sum256([]byte(r.content))
	return fmt.Sprintf("%s-%s-%s", r.glance.Name, r.component, hex.EncodeToString(sum[:])[:10])
}

// object builds the immutable Secret or ConfigMap.
func (r rendered) object(revision int) (*fn.KubeObject, error) {
	meta := map[string]any{
		"name": r.name(),
		"labels": map[string]any{
			v1alpha1.LabelManagedBy: v1alpha1.ManagedByGlanceKRM,
			v1alpha1.LabelGlance:    r.glance.Name,
			v1alpha1.LabelComponent: r.component,
		},
		"annotations": map[string]any{
			v1alpha1.AnnotationArgoCDSync: v1alpha1.ArgoCDPruneLast,
			v1alpha1.AnnotationRevision:   strconv.Itoa(revision),
		},
	}
	if r.glance.Namespace != "" {
		meta["namespace"] = r.glance.Namespace
	}
	obj := map[string]any{
		"apiVersion": "v1",
		"kind":       r.kind(),
		"metadata":   meta,
		"immutable":  true,
	}
	if r.kind() == "Secret" {
		// stringData keeps the rendered file readable in a kpt package and
		// in review; backends.conf holds no credential. The API server
		// stores it as data, and Argo CD normalises the two when it diffs.
		obj["type"] = "Opaque"
		obj["stringData"] = map[string]any{r.key: r.content}
	} else {
		obj["data"] = map[string]any{r.key: r.content}
	}
	return fn.NewKubeObjectFromMap(obj)
}

// isGenerated tells whether an item is a copy glance-krm generated for the
// given Glance and component.
func isGenerated(obj *fn.KubeObject, namespace, glance, component string) bool {
	return obj.GetAPIVersion() == "v1" &&
		obj.GetNamespace() == namespace &&
		obj.GetLabel(v1alpha1.LabelManagedBy) == v1alpha1.ManagedByGlanceKRM &&
		obj.GetLabel(v1alpha1.LabelGlance) == glance &&
		obj.GetLabel(v1alpha1.LabelComponent) == component
}

func revisionOf(obj *fn.KubeObject) int {
	n, _ := strconv.Atoi(obj.GetAnnotation(v1alpha1.AnnotationRevision))
	return n
}

// upsertGenerated puts the rendered object into items, replacing the copy
// of the same name if there is one (so running on our own output is a
// no-op), numbering it as the newest revision, and dropping all but the
// newest HistoryLimit copies. It returns the object's name.
func upsertGenerated(items fn.KubeObjects, r rendered) (fn.KubeObjects, string, error) {
	name := r.name()
	var copies fn.KubeObjects
	var current *fn.KubeObject
	maxRev := 0
	for _, it := range items {
		if it.GetKind() != r.kind() || !isGenerated(it, r.glance.Namespace, r.glance.Name, r.component) {
			continue
		}
		copies = append(copies, it)
		if it.GetName() == name {
			current = it
		} else {
			maxRev = max(maxRev, revisionOf(it))
		}
	}
	revision := maxRev + 1
	if current != nil && revisionOf(current) > maxRev {
		revision = revisionOf(current)
	}
	obj, err := r.object(revision)
	if err != nil {
		return items, "", err
	}
	if current != nil {
		// Keep where the orchestrator said the copy lives, so kpt writes it
		// back to the same file.
		for k, v := range current.GetAnnotations() {
			if isOrchestratorAnnotation(k) {
				if err := obj.SetAnnotation(k, v); err != nil {
					return items, "", err
				}
			}
		}
	}

	older := slices.DeleteFunc(slices.Clone(copies), func(o *fn.KubeObject) bool { return o == current })
	slices.SortStableFunc(older, func(a, b *fn.KubeObject) int { return revisionOf(b) - revisionOf(a) })
	drop := map[*fn.KubeObject]bool{}
	if current != nil {
		drop[current] = true
	}
	for i, o := range older {
		if i >= HistoryLimit-1 {
			drop[o] = true
		}
	}
	out := slices.DeleteFunc(items, func(o *fn.KubeObject) bool { return drop[o] })
	return append(out, obj), name, nil
}

func isOrchestratorAnnotation(k string) bool {
	switch k {
	case "internal.config.kubernetes.io/path", "internal.config.kubernetes.io/index",
		"config.kubernetes.io/path", "config.kubernetes.io/index",
		"internal.config.kubernetes.io/id", "config.k8s.io/id":
		return true
	}
	return false
}
