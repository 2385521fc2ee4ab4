package validate

import (
	"strconv"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// fieldParts splits a result's field path, in apimachinery's notation
// (spec.s3.host, spec.extraOptions[store_description], spec.apis[0].name),
// into its steps: a key in brackets is one step, dots and all.
func fieldParts(path string) []string {
	var parts []string
	var cur strings.Builder
	flush := func() {
		if cur.Len() > 0 {
			parts = append(parts, cur.String())
			cur.Reset()
		}
	}
	for i := 0; i < len(path); i++ {
		switch c := path[i]; c {
		case '.':
			flush()
		case '[':
			flush()
			end := strings.IndexByte(path[i:], ']')
			if end < 0 {
				cur.WriteString(path[i+1:])
				i = len(path)
				continue
			}
			parts = append(parts, path[i+1:i+end])
			i += end
		default:
			cur.WriteByte(c)
		}
	}
	flush()
	return parts
}

// pointerParts splits a JSON pointer (a JSON 6902 op's path) into steps.
func pointerParts(p string) []string {
	if p == "" || p == "/" {
		return nil
	}
	parts := strings.Split(strings.TrimPrefix(p, "/"), "/")
	for i, s := range parts {
		parts[i] = strings.NewReplacer("~1", "/", "~0", "~").Replace(s)
	}
	return parts
}

// descend follows parts from n as far as they go: the node reached, how
// many steps were taken, and the line of the last step (a key's line for
// a mapping, the element's for a sequence; n's own with none).
func descend(n *yaml.RNode, parts []string) (node *yaml.RNode, depth, line int) {
	node, line = n, n.YNode().Line
	for _, part := range parts {
		var next *yaml.RNode
		nextLine := 0
		switch node.YNode().Kind {
		case yaml.MappingNode:
			if f := node.Field(part); f != nil {
				next, nextLine = f.Value, f.Key.YNode().Line
			}
		case yaml.SequenceNode:
			if i, err := strconv.Atoi(part); err == nil && i >= 0 && i < len(node.YNode().Content) {
				next = yaml.NewRNode(node.YNode().Content[i])
				nextLine = next.YNode().Line
			}
		}
		if next == nil {
			break
		}
		node, line = next, nextLine
		depth++
	}
	return node, depth, line
}

// hasPrefix is whether parts begins with prefix.
func hasPrefix(parts, prefix []string) bool {
	if len(prefix) > len(parts) {
		return false
	}
	for i := range prefix {
		if parts[i] != prefix[i] {
			return false
		}
	}
	return true
}
