package glancekrm

import (
	"bytes"
	"fmt"

	"github.com/c5c3/glance-krm/fn/glancekrm/history"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/kio"

	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

// KeepHistory gives a stateless build the history kpt keeps: current is
// what `kustomize build` wrote with the function in it (multi-document
// YAML), previous what KeepHistory wrote last time (nil the first time),
// config the function's configuration the build used (nil for the
// defaults). The rendered copies of previous take the place of current's,
// and the function runs once more, as kpt re-runs it on its package: the
// current copies are kept or added as the newest revision and at most
// HistoryLimit copies per Glance and kind remain. An older copy therefore
// stays in the output, and in the cluster, while the pods that mount it are
// replaced — the job Argo CD's PruneLast does, for a pipeline (Flux) that
// prunes what leaves its output right after applying.
func KeepHistory(previous, current, config []byte) ([]byte, fn.Results, error) {
	items, err := readDocs(current)
	if err != nil {
		return nil, nil, fmt.Errorf("the current build: %w", err)
	}
	old, err := readDocs(previous)
	if err != nil {
		return nil, nil, fmt.Errorf("the previous output: %w", err)
	}
	rl := &fn.ResourceList{FunctionConfig: fn.NewEmptyKubeObject()}
	for _, o := range items {
		if !isRenderedCopy(o) {
			rl.Items = append(rl.Items, o)
		}
	}
	for _, o := range old {
		if isRenderedCopy(o) {
			rl.Items = append(rl.Items, o)
		}
	}
	if len(bytes.TrimSpace(config)) > 0 {
		if rl.FunctionConfig, err = fn.ParseKubeObject(config); err != nil {
			return nil, nil, fmt.Errorf("the function's configuration: %w", err)
		}
	}
	ok, err := Process(rl)
	if err != nil {
		return nil, rl.Results, err
	}
	out, werr := writeDocs(rl.Items)
	if werr != nil {
		return nil, rl.Results, werr
	}
	if !ok {
		return out, rl.Results, ErrFunctionFailed
	}
	return out, rl.Results, nil
}

// isRenderedCopy: a hashed Secret or ConfigMap the function rendered.
func isRenderedCopy(o *fn.KubeObject) bool {
	k, ok := history.KeyOf(o)
	return ok && (k.Component == v1alpha1.ComponentBackends || k.Component == v1alpha1.ComponentConfig)
}

func readDocs(b []byte) (fn.KubeObjects, error) {
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, nil
	}
	nodes, err := (&kio.ByteReader{Reader: bytes.NewReader(b), OmitReaderAnnotations: true}).Read()
	if err != nil {
		return nil, err
	}
	return fn.MoveToKubeObjects(nodes), nil
}

// writeDocs writes objects as multi-document YAML, in the function's
// output order.
func writeDocs(objs fn.KubeObjects) ([]byte, error) {
	sortItems(objs)
	var buf bytes.Buffer
	for i, o := range objs {
		if i > 0 {
			buf.WriteString("---\n")
		}
		buf.WriteString(o.String())
	}
	return buf.Bytes(), nil
}
