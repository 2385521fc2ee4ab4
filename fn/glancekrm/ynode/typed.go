package ynode

import (
	"encoding/json"
	"maps"
	"math"
	"slices"
	"strconv"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Object turns a typed Kubernetes object (or a plain map) into an
// item of the ResourceList, without the empty status and null fields that
// Go's zero values marshal to; keys come out sorted, so the output is the
// same for the same object.
func Object(obj any) (*fn.KubeObject, error) {
	b, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	delete(m, "status")
	return fn.MoveToKubeObject(yaml.NewRNode(FromJSON(m))), nil
}

// FromJSON builds the YAML node of a decoded JSON value directly (keys
// sorted, nulls left out), without a marshal and parse round trip: the
// function generates several objects per Glance.
func FromJSON(v any) *yaml.Node {
	switch v := v.(type) {
	case map[string]any:
		n := &yaml.Node{Kind: yaml.MappingNode, Tag: yaml.NodeTagMap}
		for _, k := range slices.Sorted(maps.Keys(v)) {
			if v[k] != nil {
				n.Content = append(n.Content, Str(k), FromJSON(v[k]))
			}
		}
		return n
	case []any:
		n := &yaml.Node{Kind: yaml.SequenceNode, Tag: yaml.NodeTagSeq}
		for _, x := range v {
			n.Content = append(n.Content, FromJSON(x))
		}
		return n
	case string:
		return Str(v)
	case bool:
		return Value(v)
	case float64:
		if v == math.Trunc(v) && math.Abs(v) < 1<<53 {
			return &yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagInt, Value: strconv.FormatInt(int64(v), 10)}
		}
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagFloat, Value: strconv.FormatFloat(v, 'g', -1, 64)}
	}
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagNull, Value: "null"}
}
