package decode

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// yamlToJSON writes a parsed YAML node as JSON, resolving scalars the way
// YAML 1.2's core schema (and so sigs.k8s.io/yaml) does, without the
// serialize-and-parse round trip of marshalling the node first: decoding
// Glances and GlanceBackends is on the function's hot path.
func yamlToJSON(n *yaml.Node) ([]byte, error) {
	var b bytes.Buffer
	if err := writeJSON(&b, n, 0); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// maxDepth bounds recursion: Kubernetes objects are shallow, a hostile
// input need not be.
const maxDepth = 100

func writeJSON(b *bytes.Buffer, n *yaml.Node, depth int) error {
	if depth > maxDepth {
		return fmt.Errorf("nested deeper than %d levels", maxDepth)
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			b.WriteString("null")
			return nil
		}
		return writeJSON(b, n.Content[0], depth+1)
	case yaml.AliasNode:
		return fmt.Errorf("YAML aliases are not supported in %s objects", "glance.openstack.c5c3.io")
	case yaml.MappingNode:
		b.WriteByte('{')
		for i := 0; i+1 < len(n.Content); i += 2 {
			if i > 0 {
				b.WriteByte(',')
			}
			k := n.Content[i]
			if k.Kind != yaml.ScalarNode {
				return fmt.Errorf("line %d: a mapping key must be a scalar", k.Line)
			}
			writeString(b, k.Value)
			b.WriteByte(':')
			if err := writeJSON(b, n.Content[i+1], depth+1); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	case yaml.SequenceNode:
		b.WriteByte('[')
		for i, c := range n.Content {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := writeJSON(b, c, depth+1); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	case yaml.ScalarNode:
		writeScalar(b, n)
	default:
		return fmt.Errorf("line %d: unsupported YAML node", n.Line)
	}
	return nil
}

func writeScalar(b *bytes.Buffer, n *yaml.Node) {
	switch n.ShortTag() {
	case yaml.NodeTagNull:
		b.WriteString("null")
	case yaml.NodeTagBool:
		if v, err := strconv.ParseBool(n.Value); err == nil {
			b.WriteString(strconv.FormatBool(v))
			return
		}
		writeString(b, n.Value)
	case yaml.NodeTagInt:
		if v, err := strconv.ParseInt(n.Value, 0, 64); err == nil {
			b.WriteString(strconv.FormatInt(v, 10))
			return
		}
		writeString(b, n.Value)
	case yaml.NodeTagFloat:
		if v, err := strconv.ParseFloat(n.Value, 64); err == nil {
			if out, err := json.Marshal(v); err == nil {
				b.Write(out)
				return
			}
		}
		writeString(b, n.Value)
	default:
		writeString(b, n.Value)
	}
}

func writeString(b *bytes.Buffer, s string) {
	out, _ := json.Marshal(s)
	b.Write(out)
}
