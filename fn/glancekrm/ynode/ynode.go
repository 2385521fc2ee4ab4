package ynode

import (
	"strconv"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Building nodes directly, rather than through yaml.FromMap (marshal, then
// parse), keeps object construction off the hot path of large inputs.

// Mapping builds a mapping node from key/value pairs, in the given order;
// values are strings, bools or nodes.
func Mapping(pairs ...any) *yaml.Node {
	n := &yaml.Node{Kind: yaml.MappingNode, Tag: yaml.NodeTagMap}
	for i := 0; i+1 < len(pairs); i += 2 {
		n.Content = append(n.Content, Str(pairs[i].(string)), Value(pairs[i+1]))
	}
	return n
}

func Value(v any) *yaml.Node {
	switch v := v.(type) {
	case *yaml.Node:
		return v
	case bool:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagBool, Value: strconv.FormatBool(v)}
	case string:
		return Str(v)
	}
	panic("unsupported value")
}

func Str(s string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagString, Value: s}
}

// String is a scalar field's value, or "" when it is absent or not a
// scalar.
func String(n *yaml.RNode, field string) string {
	if n == nil {
		return ""
	}
	f := n.Field(field)
	if f == nil || f.Value.YNode().Kind != yaml.ScalarNode {
		return ""
	}
	return f.Value.YNode().Value
}

// Seq builds a sequence node.
func Seq(items ...*yaml.Node) *yaml.Node {
	return &yaml.Node{Kind: yaml.SequenceNode, Tag: yaml.NodeTagSeq, Content: items}
}
