package glancekrm

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	"k8s.io/apimachinery/pkg/util/validation/field"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

// decodeStrict turns an object into its Go type the way the API server's
// strict field validation would: an unknown or duplicated field (a typo
// such as "isdefault") is an error with its path, not a silently ignored
// setting. The defaults of the CRD are then applied.
func decodeStrict(obj *fn.KubeObject, into interface{ Default() }) field.ErrorList {
	js, err := yaml.YAMLToJSON([]byte(obj.String()))
	if err != nil {
		return field.ErrorList{field.Invalid(field.NewPath(""), field.OmitValueType{}, err.Error())}
	}
	strictErrs, err := sigsjson.UnmarshalStrict(js, into)
	if err != nil {
		return field.ErrorList{typeError(err)}
	}
	var errs field.ErrorList
	for _, e := range strictErrs {
		errs = append(errs, strictFieldError(e))
	}
	into.Default()
	return errs
}

// strictFieldError turns 'unknown field "spec.isdefault"' into a field
// error whose path is spec.isdefault.
func strictFieldError(e error) *field.Error {
	var fe sigsjson.FieldError
	if errors.As(e, &fe) {
		what, _, _ := strings.Cut(e.Error(), " \"")
		return &field.Error{Type: field.ErrorTypeNotSupported, Field: fe.FieldPath(), BadValue: field.OmitValueType{},
			Detail: what + " (check its spelling against the CRD: kubectl explain)"}
	}
	return field.Invalid(field.NewPath(""), field.OmitValueType{}, e.Error())
}

// typeError reports a value of the wrong type, such as isDefault: "yes".
func typeError(err error) *field.Error {
	var ute *json.UnmarshalTypeError
	if errors.As(err, &ute) {
		return &field.Error{Type: field.ErrorTypeTypeInvalid, Field: ute.Field, BadValue: field.OmitValueType{},
			Detail: fmt.Sprintf("%s is not a %s", ute.Value, ute.Type)}
	}
	return field.Invalid(field.NewPath(""), field.OmitValueType{}, fmt.Sprintf("cannot decode: %v", err))
}

func decodeGlance(obj *fn.KubeObject) (*v1alpha1.Glance, field.ErrorList) {
	g := &v1alpha1.Glance{}
	errs := decodeStrict(obj, g)
	return g, errs
}

func decodeBackend(obj *fn.KubeObject) (*v1alpha1.GlanceBackend, field.ErrorList) {
	b := &v1alpha1.GlanceBackend{}
	errs := decodeStrict(obj, b)
	return b, errs
}
