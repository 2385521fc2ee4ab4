package crds

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	apiext "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
)

// A Validator judges an object as the API server judges a create against
// these CRDs: the OpenAPI schema, then every x-kubernetes-validations rule,
// with the API server's own code. The function uses it so that no rule
// written as a marker needs a second, hand-written copy to hold at build
// time.
type Validator struct {
	schema *schema.Structural
	open   validation.SchemaValidator
	root   *apiextensionsv1.JSONSchemaProps
	// cel holds one CEL validator per set of spec fields an object sets:
	// a rule under an absent field never runs, and compiling only the
	// rules that can run is most of a short build's time saved.
	cel map[string]*celValidator
}

type celValidator struct {
	schema *schema.Structural
	cel    *cel.Validator
}

var (
	mu         sync.Mutex
	validators = map[string]*Validator{}
)

// files names each kind's CRD.
var files = map[string]string{
	"Glance":        "glance.openstack.c5c3.io_glances.yaml",
	"GlanceBackend": "glance.openstack.c5c3.io_glancebackends.yaml",
}

// For is the validator of a kind (Glance, GlanceBackend), built on first
// use: compiling a CRD's CEL rules is most of a short run's time.
func For(kind string) (*Validator, error) {
	mu.Lock()
	defer mu.Unlock()
	if v := validators[kind]; v != nil {
		return v, nil
	}
	file, ok := files[kind]
	if !ok {
		return nil, fmt.Errorf("no CRD for kind %s", kind)
	}
	v, err := load(file)
	if err != nil {
		return nil, err
	}
	validators[kind] = v
	return v, nil
}

func load(file string) (*Validator, error) {
	name := "json/" + strings.TrimSuffix(file, ".yaml") + ".json"
	b, err := JSON.ReadFile(name)
	if err != nil {
		return nil, err
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := json.Unmarshal(b, &crd); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	// The CEL rules of spec.extraConfig are left to their hand-written
	// twins (krm/v1alpha1/rules_extraconfig.go), which the corpus proves
	// say the same: some sixty rules over every Glance's map were most of
	// the validator's cost.
	root := crd.Spec.Versions[0].Schema.OpenAPIV3Schema
	stripSpecRules(root, func(name string) bool { return name == "extraConfig" })
	props, s, err := structural(root)
	if err != nil {
		return nil, err
	}
	open, _, err := validation.NewSchemaValidator(props)
	if err != nil {
		return nil, err
	}
	return &Validator{schema: s, open: open, root: root, cel: map[string]*celValidator{}}, nil
}

// celFor is the CEL validator for objects that set exactly these spec
// fields: the rules under every other spec field are left out.
func (v *Validator) celFor(present []string) (*celValidator, error) {
	key := strings.Join(present, ",")
	if c := v.cel[key]; c != nil {
		return c, nil
	}
	root := v.root.DeepCopy()
	stripSpecRules(root, func(name string) bool { return !slices.Contains(present, name) })
	_, s, err := structural(root)
	if err != nil {
		return nil, err
	}
	c := &celValidator{schema: s, cel: cel.NewValidator(s, true, celconfig.PerCallLimit)}
	v.cel[key] = c
	return c, nil
}

// structural converts a CRD schema for the API server's validators.
func structural(root *apiextensionsv1.JSONSchemaProps) (*apiext.JSONSchemaProps, *schema.Structural, error) {
	var props apiext.JSONSchemaProps
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(root, &props, nil); err != nil {
		return nil, nil, err
	}
	s, err := schema.NewStructural(&props)
	return &props, s, err
}

// stripSpecRules drops every CEL rule under the spec fields drop names.
func stripSpecRules(root *apiextensionsv1.JSONSchemaProps, drop func(string) bool) {
	spec, ok := root.Properties["spec"]
	if !ok {
		return
	}
	for name, p := range spec.Properties {
		if drop(name) {
			stripAllRules(&p)
			spec.Properties[name] = p
		}
	}
	root.Properties["spec"] = spec
}

func stripAllRules(s *apiextensionsv1.JSONSchemaProps) {
	s.XValidations = nil
	for name, p := range s.Properties {
		stripAllRules(&p)
		s.Properties[name] = p
	}
	if s.Items != nil && s.Items.Schema != nil {
		stripAllRules(s.Items.Schema)
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
		stripAllRules(s.AdditionalProperties.Schema)
	}
}

// Validate returns every violation of obj, a decoded JSON object.
func (v *Validator) Validate(obj map[string]any) field.ErrorList {
	errs := validation.ValidateCustomResource(nil, obj, v.open)
	spec, _ := obj["spec"].(map[string]any)
	present := slices.Sorted(maps.Keys(spec))
	mu.Lock()
	c, err := v.celFor(present)
	mu.Unlock()
	if err != nil {
		return append(errs, field.InternalError(nil, err))
	}
	if c.cel != nil {
		celErrs, _ := c.cel.Validate(context.Background(), nil, c.schema, obj, nil, celconfig.RuntimeCELCostBudget)
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
