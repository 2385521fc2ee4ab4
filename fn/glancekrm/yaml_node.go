package glancekrm

import (
	"strconv"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Building nodes directly, rather than through yaml.FromMap (marshal, then
// parse), keeps object construction off the hot path of large inputs.

// mapping builds a mapping node from key/value pairs, in the given order;
// values are strings, bools or nodes.
func mapping(pairs ...any) *yaml.Node {
	n := &yaml.Node{Kind: yaml.MappingNode, Tag: yaml.NodeTagMap}
	for i := 0; i+1 < len(pairs); i += 2 {
		n.Content = append(n.Content, str(pairs[i].(string)), value(pairs[i+1]))
	}
	return n
}

func value(v any) *yaml.Node {
	switch v := v.(type) {
	case *yaml.Node:
		return v
	case bool:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagBool, Value: strconv.FormatBool(v)}
	case string:
		return str(v)
	}
	panic("unsupported value")
}

func str(s string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagString, Value: s}
}

// getString is a scalar field's value, or "" when it is absent or not a
// scalar.
func getString(n *yaml.RNode, field string) string {
	if n == nil {
		return ""
	}
	f := n.Field(field)
	if f == nil || f.Value.YNode().Kind != yaml.ScalarNode {
		return ""
	}
	return f.Value.YNode().Value
}

// seq builds a sequence node.
func seq(items ...*yaml.Node) *yaml.Node {
	return &yaml.Node{Kind: yaml.SequenceNode, Tag: yaml.NodeTagSeq, Content: items}
}
