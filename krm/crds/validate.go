package crds

import (
	"context"
	"fmt"
	"sync"

	apiext "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"sigs.k8s.io/yaml"
)

// A Validator judges an object as the API server judges a create against
// these CRDs: the OpenAPI schema, then every x-kubernetes-validations rule,
// with the API server's own code. The function uses it so that no rule
// written as a marker needs a second, hand-written copy to hold at build
// time.
type Validator struct {
	schema *schema.Structural
	open   validation.SchemaValidator
	cel    *cel.Validator
}

var (
	once       sync.Once
	validators map[string]*Validator
	loadErr    error
)

// For is the validator of a kind (Glance, GlanceBackend).
func For(kind string) (*Validator, error) {
	once.Do(func() { validators, loadErr = load() })
	if loadErr != nil {
		return nil, loadErr
	}
	v := validators[kind]
	if v == nil {
		return nil, fmt.Errorf("no CRD for kind %s", kind)
	}
	return v, nil
}

func load() (map[string]*Validator, error) {
	entries, err := FS.ReadDir(".")
	if err != nil {
		return nil, err
	}
	out := map[string]*Validator{}
	for _, e := range entries {
		b, err := FS.ReadFile(e.Name())
		if err != nil {
			return nil, err
		}
		var crd apiextensionsv1.CustomResourceDefinition
		if err := yaml.Unmarshal(b, &crd); err != nil {
			return nil, fmt.Errorf("%s: %w", e.Name(), err)
		}
		var props apiext.JSONSchemaProps
		if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(crd.Spec.Versions[0].Schema.OpenAPIV3Schema, &props, nil); err != nil {
			return nil, err
		}
		s, err := schema.NewStructural(&props)
		if err != nil {
			return nil, err
		}
		open, _, err := validation.NewSchemaValidator(&props)
		if err != nil {
			return nil, err
		}
		out[crd.Spec.Names.Kind] = &Validator{schema: s, open: open, cel: cel.NewValidator(s, true, celconfig.PerCallLimit)}
	}
	return out, nil
}

// Validate returns every violation of obj, a decoded JSON object.
func (v *Validator) Validate(obj map[string]any) field.ErrorList {
	errs := validation.ValidateCustomResource(nil, obj, v.open)
	if v.cel != nil {
		celErrs, _ := v.cel.Validate(context.Background(), nil, v.schema, obj, nil, celconfig.RuntimeCELCostBudget)
		errs = append(errs, celErrs...)
	}
	return errs
}

// Check applies the schema's defaults to obj, as the API server does
// before it validates, and returns every violation.
func (v *Validator) Check(obj map[string]any) field.ErrorList {
	defaulting.Default(obj, v.schema)
	return v.Validate(obj)
}
