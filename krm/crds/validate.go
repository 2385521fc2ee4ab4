package crds

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"strings"
	"sync"

	apiext "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype"
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
	// root holds the rules of the object and of spec itself; fields, the
	// rules under each spec field, compiled on first use (a rule under an
	// absent field never runs, and compiling only the rules that can run
	// is most of a short build's time saved). Each field's rules see only
	// the field (a CEL rule's self is the value it sits on), so they are
	// compiled on the field's own schema, in parallel, and once per
	// process, whatever other fields an object sets.
	root   *celPart
	fields map[string]*celPart
}

// celPart is the API server's CEL validator of one part of the schema.
type celPart struct {
	once   sync.Once
	build  func() (*schema.Structural, error)
	field  string      // the spec field, "" for the object itself
	path   *field.Path // where the part sits: nil for the object itself
	schema *schema.Structural
	cel    *cel.Validator
	err    error
}

func (p *celPart) compile() {
	p.once.Do(func() {
		s, err := p.build()
		if err != nil {
			p.err = err
			return
		}
		p.schema = s
		p.cel = cel.NewValidator(s, p.path == nil || s.XEmbeddedResource, celconfig.PerCallLimit)
	})
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
// use.
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

// Prepare builds a kind's validator and compiles the rules every object
// of it runs (those of the object and of spec) in the background, so that
// a caller who knows it will validate such objects (the function, on
// seeing our API group in its input) pays for them while it parses.
func Prepare(kind string) {
	go func() {
		if v, err := For(kind); err == nil {
			v.root.compile()
		}
	}()
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
	v := &Validator{schema: s, open: open, fields: map[string]*celPart{}}
	v.root = &celPart{build: func() (*schema.Structural, error) {
		top := root.DeepCopy()
		stripSpecRules(top, func(string) bool { return true })
		_, s, err := structural(top)
		return s, err
	}}
	if spec, ok := s.Properties["spec"]; ok {
		for name, sub := range spec.Properties {
			if !hasRules(&sub) {
				continue
			}
			v.fields[name] = &celPart{field: name, path: field.NewPath("spec", name), build: func() (*schema.Structural, error) { return &sub, nil }}
		}
	}
	return v, nil
}

// hasRules tells whether a schema holds a CEL rule anywhere.
func hasRules(s *schema.Structural) bool {
	if s == nil {
		return false
	}
	if len(s.XValidations) > 0 || hasRules(s.Items) {
		return true
	}
	if s.AdditionalProperties != nil && hasRules(s.AdditionalProperties.Structural) {
		return true
	}
	for _, p := range s.Properties {
		if hasRules(&p) {
			return true
		}
	}
	return false
}

// parts are the CEL validators for an object that sets these spec fields,
// compiled, at most GOMAXPROCS at a time, where they were not yet.
func (v *Validator) parts(present []string) []*celPart {
	parts := []*celPart{v.root}
	for _, name := range present {
		if p := v.fields[name]; p != nil {
			parts = append(parts, p)
		}
	}
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for _, p := range parts {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			p.compile()
		})
	}
	wg.Wait()
	return parts
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

// Validate returns every violation of obj, a decoded JSON object. The
// parts share one runtime cost budget, as the API server's one validator
// of the whole object does.
func (v *Validator) Validate(obj map[string]any) field.ErrorList {
	errs := validation.ValidateCustomResource(nil, obj, v.open)
	// Duplicate keys of x-kubernetes-list-type map and set lists, as the
	// API server's create strategy refuses them.
	errs = append(errs, listtype.ValidateListSetsAndMaps(nil, v.schema, obj)...)
	spec, _ := obj["spec"].(map[string]any)
	budget := int64(celconfig.RuntimeCELCostBudget)
	for _, p := range v.parts(slices.Sorted(maps.Keys(spec))) {
		if p.err != nil {
			errs = append(errs, field.InternalError(p.path, p.err))
			continue
		}
		if p.cel == nil {
			continue
		}
		var value any = obj
		if p.field != "" {
			value = spec[p.field]
		}
		var celErrs field.ErrorList
		celErrs, budget = p.cel.Validate(context.Background(), p.path, p.schema, value, nil, budget)
		errs = append(errs, celErrs...)
		if budget < 0 {
			break
		}
	}
	return errs
}

// Check applies the schema's defaults to obj, as the API server does
// before it validates, and returns every violation.
func (v *Validator) Check(obj map[string]any) field.ErrorList {
	defaulting.Default(obj, v.schema)
	return v.Validate(obj)
}
