package fluxsteps

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"
	"strconv"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/c5c3/glance-krm/fn/glancekrm/history"
	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

// KeepHistory gives a stateless build the history kpt keeps, for a
// pipeline (Flux) that prunes what leaves its output right after applying
// the new set: current is what `kustomize build` wrote with the function
// in it, previous what KeepHistory wrote last time (nil the first time).
// The output is current, byte for byte, followed by the rendered copies of
// previous that current no longer holds, each marked with how many renders
// ago it was current (AnnotationCarried), at most history.Limit copies per
// Glance and kind with current's own, and none of a Glance that current
// does not hold (deleted, renamed, moved to another namespace). The
// function does not run again: what the build did — a base's
// functionConfig, an overlay's patches and images: — is what ships.
// Given its own output as previous and the same build, it writes the same
// bytes again.
func KeepHistory(previous, current []byte) ([]byte, error) {
	items, err := readDocs(current)
	if err != nil {
		return nil, fmt.Errorf("the current build: %w", err)
	}
	old, err := readDocs(previous)
	if err != nil {
		return nil, fmt.Errorf("the previous output: %w", err)
	}
	glances, held := map[objKey]bool{}, map[string]bool{}
	now := map[history.Key][]string{} // the current copies of each Glance, component and kind
	for _, o := range items {
		held[o.GetKind()+"/"+o.GetNamespace()+"/"+o.GetName()] = true
		if o.GetAPIVersion() == v1alpha1.APIVersion && o.GetKind() == v1alpha1.GlanceKind {
			glances[objKey{o.GetNamespace(), o.GetName()}] = true
		}
		if k, ok := renderedCopy(o); ok {
			now[k] = append(now[k], o.GetName())
		}
	}
	// The copies previous held as current, by group: when a group's are
	// current's too, nothing moved on and the carried copies keep their age.
	was := map[history.Key][]string{}
	for _, o := range old {
		if k, ok := renderedCopy(o); ok && carriedAge(o) == 0 {
			was[k] = append(was[k], o.GetName())
		}
	}
	var carried fn.KubeObjects
	for _, o := range old {
		k, ok := renderedCopy(o)
		if !ok || held[o.GetKind()+"/"+o.GetNamespace()+"/"+o.GetName()] || !glances[objKey{k.Namespace, k.Glance}] {
			continue
		}
		age := carriedAge(o)
		if !sameNames(was[k], now[k]) {
			age++
		}
		if age == 0 || age > history.Limit-1 {
			continue
		}
		if err := o.SetAnnotation(v1alpha1.AnnotationCarried, strconv.Itoa(age)); err != nil {
			return nil, err
		}
		carried = append(carried, o)
	}
	slices.SortStableFunc(carried, func(a, b *fn.KubeObject) int {
		return cmp.Or(cmp.Compare(a.GetNamespace(), b.GetNamespace()), cmp.Compare(a.GetKind(), b.GetKind()),
			cmp.Compare(carriedAge(a), carriedAge(b)), cmp.Compare(a.GetName(), b.GetName()))
	})
	out := bytes.Clone(current)
	if len(out) > 0 && !bytes.HasSuffix(out, []byte("\n")) {
		out = append(out, '\n')
	}
	for _, o := range carried {
		if len(out) > 0 {
			out = append(out, "---\n"...)
		}
		out = append(out, o.String()...)
	}
	return out, nil
}

// renderedCopy is the group of a hashed Secret or ConfigMap the function
// rendered.
// objKey is an object by namespace and name.
type objKey struct{ ns, name string }

func renderedCopy(o *fn.KubeObject) (history.Key, bool) {
	k, ok := history.KeyOf(o)
	return k, ok && (k.Component == v1alpha1.ComponentBackends || k.Component == v1alpha1.ComponentConfig)
}

// carriedAge is how many renders ago a carried copy was current; 0 for a
// copy of the build itself.
func carriedAge(o *fn.KubeObject) int {
	n, _ := strconv.Atoi(o.GetAnnotation(v1alpha1.AnnotationCarried))
	return n
}

func sameNames(a, b []string) bool {
	return slices.Equal(slices.Sorted(slices.Values(a)), slices.Sorted(slices.Values(b)))
}

func readDocs(b []byte) (fn.KubeObjects, error) {
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, nil
	}
	nodes, err := (&kio.ByteReader{Reader: bytes.NewReader(b), OmitReaderAnnotations: true}).Read()
	if err != nil {
		return nil, err
	}
	// The SDK's objects end the process on a node that is no mapping.
	for i, n := range nodes {
		if n.YNode().Kind != yaml.MappingNode || n.GetKind() == "" {
			return nil, fmt.Errorf("document %d is not a Kubernetes object", i+1)
		}
	}
	return fn.MoveToKubeObjects(nodes), nil
}
