package glancekrm

import (
	"encoding/json"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// toKubeObject turns a typed Kubernetes object (or a plain map) into an
// item of the ResourceList, without the empty status and null fields that
// Go's zero values marshal to; keys come out sorted, so the output is the
// same for the same object.
func toKubeObject(obj any) (*fn.KubeObject, error) {
	b, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	delete(m, "status")
	dropNulls(m)
	rn, err := yaml.FromMap(m)
	if err != nil {
		return nil, err
	}
	return fn.MoveToKubeObject(rn), nil
}

func dropNulls(v any) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if x == nil {
				delete(v, k)
				continue
			}
			dropNulls(x)
		}
	case []any:
		for _, x := range v {
			dropNulls(x)
		}
	}
}
