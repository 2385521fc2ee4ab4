package glancekrm

import (
	"bytes"
	"errors"
	"fmt"
	"sort"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/c5c3/glance-krm/fn/glancekrm/decode"
	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

// ErrFunctionFailed is Transform's error when a result is an error: the
// output is complete, and the binary exits non-zero. It is fn.Run's word
// for it.
var ErrFunctionFailed = errors.New("error: function failure")

// Transform is fn.Run with a faster writer: it parses the ResourceList, runs
// Process, and writes the result byte for byte as the SDK would (a test
// compares both on every golden case, generated inputs and the fuzz seeds).
// The SDK encodes the whole list as one YAML document, and go-yaml's
// emitter slows down superlinearly with the size of a document; encoding
// each item as its own document and indenting it under "items:" does not.
// It also returns the results this run added.
func Transform(in []byte) (out []byte, results fn.Results, err error) {
	if bytes.Contains(in, []byte(v1alpha1.Group)) {
		decode.Prepare()
	}
	rl, err := fn.ParseResourceList(in)
	if err != nil {
		return nil, nil, err
	}
	before := len(rl.Results)
	ok, procErr := Process(rl)
	results = rl.Results[before:]
	if out, err = WriteResourceList(rl); err != nil {
		return out, results, err
	}
	if procErr != nil {
		return out, results, procErr
	}
	if !ok {
		return out, results, ErrFunctionFailed
	}
	return out, results, nil
}

// WriteResourceList serializes rl as (*fn.ResourceList).ToYAML does.
func WriteResourceList(rl *fn.ResourceList) ([]byte, error) {
	if rootComments(rl.Items) {
		// go-yaml places a comment on an item's own node around the "-" of
		// the list, which a document of its own cannot reproduce: such rare
		// input takes the SDK's writer.
		return rl.ToYAML()
	}
	sortItems(rl.Items)
	rest := &fn.ResourceList{FunctionConfig: rl.FunctionConfig, Results: rl.Results}
	tail, err := rest.ToYAML()
	if err != nil {
		return nil, err
	}
	// tail is "apiVersion: ...\nkind: ResourceList\n" and then the optional
	// functionConfig and results; items go right after kind, as the SDK
	// puts them.
	head := bytes.SplitAfterN(tail, []byte("\n"), 3)
	if len(head) < 2 || !bytes.HasPrefix(head[1], []byte("kind: "+kio.ResourceListKind)) {
		return nil, fmt.Errorf("unexpected ResourceList header %q", tail)
	}
	var b bytes.Buffer
	b.Grow(len(tail) * 2)
	b.Write(head[0])
	b.Write(head[1])
	if len(rl.Items) > 0 {
		b.WriteString("items:\n")
		var doc bytes.Buffer
		for _, it := range rl.Items {
			doc.Reset()
			rn := it.MoveToResourceNode()
			err := yaml.NewEncoder(&doc).Encode(rn.YNode())
			*it = *fn.MoveToKubeObject(rn)
			if err != nil {
				return nil, err
			}
			for i, line := range bytes.SplitAfter(bytes.TrimSuffix(doc.Bytes(), []byte("\n")), []byte("\n")) {
				switch {
				case i == 0:
					b.WriteString("- ")
				case line[0] != '\n': // blank lines in block scalars stay blank
					b.WriteString("  ")
				}
				b.Write(line)
			}
			b.WriteByte('\n')
		}
	}
	if len(head) == 3 {
		b.Write(head[2])
	}
	return b.Bytes(), nil
}

// sortItems orders items as (*fn.ResourceList).Sort does, with the same
// sort.Sort and the same key, computed once per item instead of twice per
// comparison: the same comparisons give the same order, ties included.
func sortItems(items fn.KubeObjects) {
	k := keyedItems{items: items, keys: make([]string, len(items))}
	for i, it := range items {
		k.keys[i] = fmt.Sprintf("%s %s %s %s", it.GetAPIVersion(), it.GetKind(), it.GetNamespace(), it.GetName())
	}
	sort.Sort(k)
}

type keyedItems struct {
	items fn.KubeObjects
	keys  []string
}

func (k keyedItems) Len() int           { return len(k.items) }
func (k keyedItems) Less(i, j int) bool { return k.keys[i] < k.keys[j] }
func (k keyedItems) Swap(i, j int) {
	k.items[i], k.items[j] = k.items[j], k.items[i]
	k.keys[i], k.keys[j] = k.keys[j], k.keys[i]
}

// rootComments tells whether any item carries a comment on its own node
// (rather than on a field inside it).
func rootComments(items fn.KubeObjects) bool {
	for _, it := range items {
		rn := it.MoveToResourceNode()
		n := rn.YNode()
		has := n.HeadComment != "" || n.LineComment != "" || n.FootComment != ""
		*it = *fn.MoveToKubeObject(rn)
		if has {
			return true
		}
	}
	return false
}
