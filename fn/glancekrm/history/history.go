// Package history keeps the rendered copies of each Glance: the immutable
// Secret and ConfigMap named by their content, their revisions, and the
// earlier copies kept beside the current one (the contract's rollback
// history), and tells which of them a workload mounts.
package history

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/c5c3/glance-krm/fn/glancekrm/ynode"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

// Limit is how many generated copies of each kind are kept per
// Glance, the current one included: the contract's rollback history. It
// matters under kpt, whose package keeps what the function wrote; under
// kustomize and Argo CD, git history is the rollback.
const Limit = 3

// Rendered is one generated object before it becomes YAML.
type Rendered struct {
	Glance    *v1alpha1.Glance
	Component string            // v1alpha1.ComponentBackends or ComponentConfig
	Data      map[string]string // file name -> content
}

func (r Rendered) Kind() string {
	if r.Component == v1alpha1.ComponentBackends {
		return "Secret"
	}
	return "ConfigMap"
}

// name is <glance>-<component>-<hash>. The hash covers the content only, so
// the name changes exactly when what glance-api reads changes: a lone
// file's bytes, or every file length-prefixed by name, so that no two
// different sets of files hash alike.
func (r Rendered) Name() string {
	h := sha256.New()
	keys := slices.Sorted(maps.Keys(r.Data))
	if len(keys) == 1 {
		h.Write([]byte(r.Data[keys[0]]))
	} else {
		for _, k := range keys {
			fmt.Fprintf(h, "%d:%s=%d:%s\n", len(k), k, len(r.Data[k]), r.Data[k])
		}
	}
	return fmt.Sprintf("%s-%s-%s", r.Glance.Name, r.Component, hex.EncodeToString(h.Sum(nil))[:10])
}

// object builds the immutable Secret or ConfigMap.
func (r Rendered) object(revision int) *fn.KubeObject {
	meta := ynode.Mapping(
		"annotations", ynode.Mapping(
			v1alpha1.AnnotationArgoCDSync, v1alpha1.ArgoCDPruneLast,
			// The first wave: the pods of the later ones mount it.
			v1alpha1.AnnotationArgoCDSyncWave, v1alpha1.WaveAnnotation(v1alpha1.WavePrepare),
			v1alpha1.AnnotationFluxSubstitute, v1alpha1.FluxDisabled,
			v1alpha1.AnnotationRelease, r.Glance.Spec.OpenStackRelease,
			v1alpha1.AnnotationRevision, strconv.Itoa(revision)),
		"labels", ynode.Mapping(
			v1alpha1.LabelManagedBy, v1alpha1.ManagedByGlanceKRM,
			v1alpha1.LabelComponent, r.Component,
			v1alpha1.LabelGlance, r.Glance.Name),
		"name", r.Name())
	if r.Glance.Namespace != "" {
		meta.Content = append(meta.Content, ynode.Str("namespace"), ynode.Str(r.Glance.Namespace))
	}
	data := &yaml.Node{Kind: yaml.MappingNode, Tag: yaml.NodeTagMap}
	for _, k := range slices.Sorted(maps.Keys(r.Data)) {
		data.Content = append(data.Content, ynode.Str(k), ynode.Str(r.Data[k]))
	}
	var obj *yaml.Node
	if r.Kind() == "Secret" {
		// stringData keeps the rendered file readable in a kpt package and
		// in review; backends.conf holds no credential. The API server
		// stores it as data, and Argo CD normalises the two when it diffs.
		obj = ynode.Mapping("apiVersion", "v1", "immutable", true, "kind", "Secret", "metadata", meta,
			"stringData", data, "type", "Opaque")
	} else {
		obj = ynode.Mapping("apiVersion", "v1", "data", data, "immutable", true, "kind", "ConfigMap", "metadata", meta)
	}
	return fn.MoveToKubeObject(yaml.NewRNode(obj))
}

// KeyOf says which Glance and component an item is a generated copy
// for, if glance-krm generated it.
func KeyOf(obj *fn.KubeObject) (Key, bool) {
	// The revision annotation marks a copy too: an overlay's labels: may
	// have overwritten managed-by before the function runs again.
	if obj.GetAPIVersion() != "v1" || (obj.GetLabel(v1alpha1.LabelManagedBy) != v1alpha1.ManagedByGlanceKRM && obj.GetAnnotation(v1alpha1.AnnotationRevision) == "") {
		return Key{}, false
	}
	k := Key{obj.GetNamespace(), obj.GetLabel(v1alpha1.LabelGlance), obj.GetLabel(v1alpha1.LabelComponent), obj.GetKind()}
	return k, k.Glance != "" && k.Component != ""
}

// Key groups generated copies: one history per Glance, component and kind.
type Key struct{ Namespace, Glance, Component, Kind string }

func RevisionOf(obj *fn.KubeObject) int {
	n, _ := strconv.Atoi(obj.GetAnnotation(v1alpha1.AnnotationRevision))
	return n
}

// Upsert renders the objects of one Glance's component (one per
// distinct content: Image APIs that read the same files share one). Each
// replaces the copy of the same name among copies (the earlier copies of
// this Glance and component), if there is one, so running on our own
// output is a no-op; new ones are numbered as the newest revision; the
// copies to drop are returned, so that at most Limit-1 earlier
// copies remain beside the current ones. A copy that stays current (a
// workload of the input mounts it) keeps its revision, so that one API's
// change leaves another API's files as they were; an earlier copy used
// again becomes the newest revision.
func Upsert(copies fn.KubeObjects, rs []Rendered, mounted map[string]bool) (objs, drop fn.KubeObjects, err error) {
	current := map[string]*fn.KubeObject{}
	var names []string
	for _, r := range rs {
		if n := r.Name(); !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	var older fn.KubeObjects
	maxRev, maxAll := 0, 0
	for _, c := range copies {
		maxAll = max(maxAll, RevisionOf(c))
		if slices.Contains(names, c.GetName()) {
			current[c.GetName()] = c
			continue
		}
		older = append(older, c)
		maxRev = max(maxRev, RevisionOf(c))
	}
	done := map[string]bool{}
	for _, r := range rs {
		name := r.Name()
		if done[name] {
			continue
		}
		done[name] = true
		revision := maxAll + 1
		prev := current[name]
		if prev != nil && (RevisionOf(prev) > maxRev || mounted[name]) {
			revision = RevisionOf(prev)
		}
		obj := r.object(revision)
		if prev != nil {
			// Keep where the orchestrator said the copy lives, so kpt
			// writes it back to the same file.
			for k, v := range prev.GetAnnotations() {
				if isOrchestratorAnnotation(k) {
					if err := obj.SetAnnotation(k, v); err != nil {
						return nil, nil, err
					}
				}
			}
			drop = append(drop, prev)
		}
		objs = append(objs, obj)
	}
	slices.SortStableFunc(older, func(a, b *fn.KubeObject) int { return RevisionOf(b) - RevisionOf(a) })
	if len(older) > Limit-1 {
		drop = append(drop, older[Limit-1:]...)
	}
	return objs, drop, nil
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

// Mounted collects the ConfigMap and Secret names a workload's volumes
// name (configMap.name, secret.name, secret.secretName, in projected
// volumes too), wherever its pod template is.
func Mounted(n *yaml.Node, out map[string]bool) { mounted(n, false, out) }

func mounted(n *yaml.Node, inVolumeSource bool, out map[string]bool) {
	if n == nil {
		return
	}
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i].Value, n.Content[i+1]
			if inVolumeSource && (k == "name" || k == "secretName") && v.Kind == yaml.ScalarNode {
				out[v.Value] = true
			}
			mounted(v, k == "configMap" || k == "secret", out)
		}
		return
	}
	for _, c := range n.Content {
		mounted(c, false, out)
	}
}
