package decode

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	sigsjson "sigs.k8s.io/json"
)

// ConfigSpec is the function's configuration: spec of a
// RenderGlanceConfig, data of a kpt ConfigMap.
type ConfigSpec struct {
	// CredentialsImage is the image of the credentials init container.
	CredentialsImage string `json:"credentialsImage,omitempty"`
	// Workloads is generate (the default) or none.
	Workloads string `json:"workloads,omitempty"`
}

// renderGlanceConfig is the kustomize transformer's own object.
type renderGlanceConfig struct {
	APIVersion string          `json:"apiVersion"`
	Kind       string          `json:"kind"`
	Metadata   json.RawMessage `json:"metadata,omitempty"`
	Spec       ConfigSpec      `json:"spec"`
}

// ConfigProblems are what strict decoding found: fields it does not know
// (by path), and a known field holding a value of the wrong type.
type ConfigProblems struct {
	Unknown   []string
	WrongType string // the path, "" when none
}

// Config decodes a functionConfig strictly, the way the CRs are: the whole
// RenderGlanceConfig when section is "spec", the data of a ConfigMap when
// it is "data" (a ConfigMap's other fields are kpt's).
func Config(obj *fn.KubeObject, section string) (ConfigSpec, ConfigProblems, error) {
	n := obj.CopyToResourceNode()
	if section == "data" {
		data := n.Field("data")
		if data == nil || data.Value == nil {
			return ConfigSpec{}, ConfigProblems{}, nil
		}
		n = data.Value
	}
	js, err := yamlToJSON(n.YNode())
	if err != nil {
		return ConfigSpec{}, ConfigProblems{}, err
	}
	var spec ConfigSpec
	var into any = &spec
	var whole renderGlanceConfig
	if section == "spec" {
		into = &whole
	}
	var p ConfigProblems
	strictErrs, err := sigsjson.UnmarshalStrict(js, into)
	var ute *json.UnmarshalTypeError
	switch {
	case errors.As(err, &ute):
		switch {
		case ute.Field == "":
			p.WrongType = section
		case section == "data":
			p.WrongType = "data." + ute.Field
		default:
			p.WrongType = ute.Field
		}
		return ConfigSpec{}, p, nil
	case err != nil:
		return ConfigSpec{}, p, fmt.Errorf("%s: %w", section, err)
	}
	for _, e := range strictErrs {
		var fe sigsjson.FieldError
		if errors.As(e, &fe) {
			path := fe.FieldPath()
			if section == "data" {
				path = "data." + path
			}
			p.Unknown = append(p.Unknown, path)
		}
	}
	if section == "spec" {
		spec = whole.Spec
	}
	return spec, p, nil
}
