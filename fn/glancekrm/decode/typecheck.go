package decode

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// typeErrors reports every value of the wrong type in a decoded JSON
// object, against the Go type it is meant for: encoding/json stops at the
// first, and a user fixing one error per build is a user lost. Values are
// quoted as the API server would, except where they may be secret.
func typeErrors(v any, t reflect.Type) field.ErrorList {
	var errs field.ErrorList
	walkType(v, t, nil, &errs)
	return errs
}

var jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()

func walkType(v any, t reflect.Type, path *field.Path, errs *field.ErrorList) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if v == nil || reflect.PointerTo(t).Implements(jsonUnmarshaler) || t.Kind() == reflect.Interface {
		return
	}
	bad := func() {
		*errs = append(*errs, field.Invalid(path, shownValue(path, v), "must be of type "+openAPIType(t)))
	}
	switch t.Kind() {
	case reflect.Struct:
		m, ok := v.(map[string]any)
		if !ok {
			bad()
			return
		}
		walkStruct(m, t, path, errs)
	case reflect.Map:
		m, ok := v.(map[string]any)
		if !ok {
			bad()
			return
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			walkType(m[k], t.Elem(), path.Key(k), errs)
		}
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			if _, ok := v.(string); !ok {
				bad()
			}
			return
		}
		l, ok := v.([]any)
		if !ok {
			bad()
			return
		}
		for i, e := range l {
			walkType(e, t.Elem(), path.Index(i), errs)
		}
	case reflect.String:
		if _, ok := v.(string); !ok {
			bad()
		}
	case reflect.Bool:
		if _, ok := v.(bool); !ok {
			bad()
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		// The API server's decoder gives int64 for integers, float64
		// otherwise.
		if _, ok := v.(int64); !ok {
			bad()
		}
	case reflect.Float32, reflect.Float64:
		switch v.(type) {
		case float64, int64:
		default:
			bad()
		}
	}
}

// walkStruct follows the json tags of a struct, inline members included.
func walkStruct(m map[string]any, t reflect.Type, path *field.Path, errs *field.ErrorList) {
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if f.Anonymous && (name == "" || strings.Contains(opts, "inline")) {
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				walkStruct(m, ft, path, errs)
				continue
			}
		}
		if name == "" {
			name = f.Name
		}
		if v, ok := m[name]; ok {
			walkType(v, f.Type, childPath(path, name), errs)
		}
	}
}

func childPath(p *field.Path, name string) *field.Path {
	if p == nil {
		return field.NewPath(name)
	}
	return p.Child(name)
}

// shownValue is the value to quote in a result: scalars as they are, but
// never under a field whose name says secret, and objects and lists by
// their kind only.
func shownValue(path *field.Path, v any) any {
	p := strings.ToLower(path.String())
	for _, w := range []string{"password", "secret", "token", "credential", "key"} {
		if strings.Contains(p, w) {
			return field.OmitValueType{}
		}
	}
	switch v := v.(type) {
	case map[string]any:
		return "an object"
	case []any:
		return "a list"
	case string:
		if len(v) > 64 {
			return v[:64] + "..."
		}
	}
	return fmt.Sprint(v)
}
