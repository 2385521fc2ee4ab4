// Package decode reads Glance and GlanceBackend objects as the API server
// would admit them: strict decoding (an unknown or duplicated field is an
// error with its path), the OpenAPI schema and CEL rules run by the API
// server's own code on the CRDs krm/crds embeds, the CRD defaults, and
// the kinds and apiVersions of our group it does not serve.
package decode

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	utiljson "k8s.io/apimachinery/pkg/util/json"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	"k8s.io/apimachinery/pkg/util/validation/field"
	sigsjson "sigs.k8s.io/json"

	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

// decodeStrict turns an object into its Go type the way the API server's
// strict field validation would: an unknown or duplicated field (a typo
// such as "isdefault") is an error with its path, not a silently ignored
// setting. The defaults of the CRD are then applied. ok is false when the
// object could not be decoded at all (wrong types, aliases): it is then
// reported and otherwise left alone.
func decodeStrict(obj *fn.KubeObject, into interface{ Default() }) (errs field.ErrorList, ok bool) {
	// Borrow the node and give it back: the same *KubeObject stays in the
	// list, without a deep copy.
	rn := obj.MoveToResourceNode()
	js, err := yamlToJSON(rn.YNode())
	*obj = *fn.MoveToKubeObject(rn)
	if err != nil {
		return field.ErrorList{field.Invalid(field.NewPath("<object>"), omit, err.Error())}, false
	}
	var generic any
	// The API server's decoder: integers stay int64, which CEL needs.
	if err := utiljson.Unmarshal(js, &generic); err == nil {
		if errs := typeErrors(generic, reflect.TypeOf(into).Elem()); len(errs) > 0 {
			return errs, false
		}
		if m, ok := generic.(map[string]any); ok {
			errs = append(errs, schemaErrors(obj.GetKind(), m)...)
		}
	}
	strictErrs, err := sigsjson.UnmarshalStrict(js, into)
	if err != nil {
		return field.ErrorList{typeError(err)}, false
	}
	for _, e := range strictErrs {
		errs = append(errs, strictFieldError(obj.GetKind(), e))
	}
	into.Default()
	return errs, true
}

// strictFieldError turns a strict-decoding error into a field error with
// the path and the API server's own words (unknown field "spec.isdefault").
func strictFieldError(kind string, e error) *field.Error {
	var fe sigsjson.FieldError
	if errors.As(e, &fe) {
		p, explain := fe.FieldPath(), strings.ToLower(kind)
		if i := strings.LastIndex(p, "."); i > 0 {
			explain += "." + p[:i]
		}
		hint := "is it misspelt? see kubectl explain " + explain
		if strings.HasPrefix(e.Error(), "duplicate field") {
			hint = "the field is set twice; the API server would refuse it"
		}
		return field.Invalid(pathOf(p), omit, fmt.Sprintf("%s (strict decoding: %s)", e.Error(), hint))
	}
	return field.Invalid(field.NewPath("<object>"), omit, e.Error())
}

// typeError reports a value of the wrong type, such as isDefault: "yes",
// in the API server's words.
func typeError(err error) *field.Error {
	var ute *json.UnmarshalTypeError
	if errors.As(err, &ute) {
		return field.Invalid(pathOf(ute.Field), ute.Value, "must be of type "+openAPIType(ute.Type))
	}
	return field.Invalid(field.NewPath("<object>"), omit, fmt.Sprintf("cannot decode: %v", err))
}

func openAPIType(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.String:
		return "string"
	case reflect.Slice, reflect.Array:
		return "array"
	default:
		return "object"
	}
}

func pathOf(dotted string) *field.Path {
	parts := strings.Split(dotted, ".")
	return field.NewPath(parts[0], parts[1:]...)
}

var omit = field.OmitValueType{}

// Glance decodes, defaults and checks a Glance; ok is false when it could
// not be decoded at all.
func Glance(obj *fn.KubeObject) (*v1alpha1.Glance, field.ErrorList, bool) {
	g := &v1alpha1.Glance{}
	errs, ok := decodeStrict(obj, g)
	return g, errs, ok
}

// Backend decodes, defaults and checks a GlanceBackend.
func Backend(obj *fn.KubeObject) (*v1alpha1.GlanceBackend, field.ErrorList, bool) {
	b := &v1alpha1.GlanceBackend{}
	errs, ok := decodeStrict(obj, b)
	return b, errs, ok
}
