package validate

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/resid"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// A doc is one YAML document of a text, its node lines counted from the
// text's first line by adding offset.
type doc struct {
	node   *yaml.RNode
	offset int
}

// splitDocs parses every document of a text (kyaml numbers a node's line
// within its own document).
func splitDocs(text string) []doc {
	text = strings.ReplaceAll(text, "\r\n", "\n")
	var out []doc
	prev := 0
	add := func(chunk string, start int) {
		n, err := yaml.Parse(chunk)
		if err != nil || n == nil || n.IsNil() {
			return
		}
		out = append(out, doc{node: n, offset: strings.Count(text[:start], "\n")})
	}
	for _, loc := range separator.FindAllStringIndex(text, -1) {
		add(text[prev:loc[0]], prev)
		prev = loc[1]
	}
	add(text[prev:], prev)
	return out
}

// A patch of a kustomization, as written: a file of its own or a text
// inline in the kustomization file.
type patch struct {
	file   string
	line   func(textLine int) int // the line in file of a line of the text
	docs   []doc                  // strategic merge patches
	ops    []doc                  // or JSON 6902 operations
	target *types.Selector
}

// patches are a kustomization's patches in the order kustomize applies
// them (PatchStrategicMergeTransformer, PatchTransformer, then
// PatchJson6902Transformer); a patch that cannot be read is left out
// (kustomize reports it).
func (k *kustomization) patches() []*patch {
	var out []*patch
	//nolint:staticcheck // deprecated, and still applied by kustomize v5: findings point into them
	for i, p := range k.k.PatchesStrategicMerge {
		out = append(out, k.patch("patchesStrategicMerge", i, k.item("patchesStrategicMerge", i), string(p), nil))
	}
	for _, list := range []struct {
		name    string
		patches []types.Patch
	}{{"patches", k.k.Patches}, {"patchesJson6902", k.k.PatchesJson6902}} { //nolint:staticcheck // deprecated, and still applied by kustomize v5
		for i, p := range list.patches {
			var text *yaml.Node
			if it := k.item(list.name, i); it != nil && it.Kind == yaml.MappingNode {
				if f := yaml.NewRNode(it).Field("patch"); f != nil {
					text = f.Value.YNode()
				}
			}
			value := p.Patch
			if p.Path != "" {
				value = p.Path
			}
			out = append(out, k.patch(list.name, i, text, value, p.Target))
		}
	}
	return slices.DeleteFunc(out, func(p *patch) bool { return p == nil })
}

// patch reads one patch: value is a path relative to the kustomization,
// or the inline text (whose node is text).
func (k *kustomization) patch(list string, i int, text *yaml.Node, value string, target *types.Selector) *patch {
	p := &patch{target: target}
	body := value
	if path := filepath.Join(filepath.Dir(k.file), value); !strings.Contains(value, "\n") && fileExists(path) {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil
		}
		p.file, body = path, string(b)
		p.line = func(l int) int { return l }
	} else {
		p.file = k.file
		if text == nil {
			text = k.item(list, i)
		}
		at := 0
		if text != nil {
			at = text.Line
		}
		p.line = func(int) int { return at } // a quoted patch: its line
		if text != nil && text.Style&yaml.LiteralStyle != 0 {
			p.line = func(l int) int { return at + l } // a block: line for line
		}
	}
	docs := splitDocs(body)
	if len(docs) == 1 && docs[0].node.YNode().Kind == yaml.SequenceNode {
		for _, op := range docs[0].node.YNode().Content {
			p.ops = append(p.ops, doc{node: yaml.NewRNode(op), offset: docs[0].offset})
		}
		return p
	}
	p.docs = slices.DeleteFunc(docs, func(d doc) bool { return !isObject(d.node) })
	return p
}

// isObject: a mapping, which kyaml's accessors of kind and name expect.
func isObject(n *yaml.RNode) bool { return n.YNode().Kind == yaml.MappingNode }

func fileExists(path string) bool {
	info, err := os.Stat(path)
	return err == nil && !info.IsDir()
}

// A hit is where a patch writes a result's field.
type hit struct {
	file string
	line int
	// same: the value it writes is the one the function saw (or it
	// removes a field the function did not see).
	same bool
}

// writes is where the patch writes the field (parts) of t, nil when it
// does not.
func (p *patch) writes(t *target, parts []string) *hit {
	var last *hit
	if p.ops != nil {
		if p.target == nil || !selects(p.target, t) {
			return nil
		}
		for _, op := range p.ops {
			if h := p.opWrites(op, t, parts); h != nil {
				last = h
			}
		}
		return last
	}
	for _, d := range p.docs {
		if !p.applies(d.node, t) {
			continue
		}
		n, depth, l := descend(d.node, parts)
		if depth == len(parts) {
			last = &hit{file: p.file, line: p.line(d.offset + l), same: sum(n) == t.Sum || (t.Sum == "" && n.YNode().Tag == yaml.NodeTagNull)}
		}
	}
	return last
}

// opWrites is where one JSON 6902 operation writes the field.
func (p *patch) opWrites(op doc, t *target, parts []string) *hit {
	path := op.node.Field("path")
	if path == nil {
		return nil
	}
	at := pointerParts(path.Value.YNode().Value)
	h := &hit{file: p.file, line: p.line(op.offset + op.node.YNode().Line)}
	verb := ""
	if f := op.node.Field("op"); f != nil {
		verb = f.Value.YNode().Value
	}
	value := op.node.Field("value")
	switch {
	case hasPrefix(parts, at) && verb == "remove":
		h.same = t.Sum == ""
	case hasPrefix(parts, at) && value != nil && (verb == "add" || verb == "replace"):
		n, depth, l := descend(value.Value, parts[len(at):])
		if depth == len(parts)-len(at) {
			h.line, h.same = p.line(op.offset+l), sum(n) == t.Sum
		} else {
			h.same = t.Sum == ""
		}
	case hasPrefix(parts, at) || hasPrefix(at, parts):
		// a move or copy, or a change inside the field: it writes it, with
		// no value to compare
	default:
		return nil
	}
	return h
}

// applies: a strategic merge patch without a target names its object.
func (p *patch) applies(d *yaml.RNode, t *target) bool {
	if p.target != nil {
		return selects(p.target, t)
	}
	ns := d.GetNamespace()
	return d.GetKind() == t.Kind && slices.Contains(t.Names, d.GetName()) && (ns == "" || slices.Contains(t.Namespaces, ns))
}

// selects is kustomize's own matching of a patch target (by any name
// the object had); label and annotation selectors are not judged, the
// value comparison decides.
func selects(sel *types.Selector, t *target) bool {
	sr, err := types.NewSelectorRegex(sel)
	if err != nil {
		return false
	}
	g, v := resid.ParseGroupVersion(t.APIVersion)
	if !sr.MatchGvk(resid.Gvk{Group: g, Version: v, Kind: t.Kind}) {
		return false
	}
	return slices.ContainsFunc(t.Names, sr.MatchName) && slices.ContainsFunc(t.Namespaces, sr.MatchNamespace)
}
