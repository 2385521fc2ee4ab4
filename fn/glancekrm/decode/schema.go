package decode

import (
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/c5c3/glance-krm/krm/crds"
	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

// schemaErrors are the API server's verdict on a Glance: its OpenAPI
// schema and CEL rules, run by the API server's own code on the CRDs this
// repository ships, so that every rule written as a marker holds at build
// time exactly as on admission. A GlanceBackend, whose every rule also has
// a hand-written twin proven equal by the corpus, skips it: the validator
// costs about a millisecond an object, and backends are most of a large
// input.
func schemaErrors(kind string, obj map[string]any) field.ErrorList {
	if kind != v1alpha1.GlanceKind {
		return nil
	}
	v, err := crds.For(kind)
	if err != nil {
		return field.ErrorList{field.InternalError(field.NewPath("<object>"), err)}
	}
	// As the API server does on create for a resource with a status
	// subresource: status is not the user's to write, so not validated.
	delete(obj, "status")
	return v.Check(obj)
}

// Dedupe keeps one finding per rule: the schema validator and a
// hand-written rule (kept where it words a check the schema cannot, or
// names a more precise path) may report the same violation. Of two, the
// one with the more precise path stays.
func Dedupe(errs field.ErrorList) field.ErrorList {
	var out field.ErrorList
	for _, e := range errs {
		dup := -1
		for i, k := range out {
			if samePlace(k.Field, e.Field) && sameRule(detail(k), detail(e)) {
				dup = i
				break
			}
		}
		switch {
		case dup < 0:
			out = append(out, e)
		case moreDeep(e.Field, out[dup].Field):
			out[dup] = e
		}
	}
	return out
}

func isRoot(path string) bool { return path == "" || path == "<nil>" }

// samePlace: the same path, or one inside the other (a CEL rule on a map
// reports the map; the hand rule names the entry).
func samePlace(a, b string) bool {
	return a == b || isRoot(a) || isRoot(b) || strings.HasPrefix(a, b+".") || strings.HasPrefix(b, a+".") ||
		strings.HasPrefix(a, b+"[") || strings.HasPrefix(b, a+"[")
}

func moreDeep(a, b string) bool { return !isRoot(a) && (isRoot(b) || len(a) > len(b)) }

func sameRule(a, b string) bool {
	a, b = strings.ToLower(a), strings.ToLower(b)
	return a != "" && b != "" && (strings.Contains(a, b) || strings.Contains(b, a))
}

// detail is the message without the API server's "<path> in body" lead.
func detail(e *field.Error) string {
	d := e.Detail
	if d == "" {
		d = e.ErrorBody()
	}
	if _, rest, ok := strings.Cut(d, " in body "); ok {
		d = rest
	}
	return d
}

// Prepare starts building the Glance validator in the background: the
// caller has seen our API group in its input and parses it meanwhile.
func Prepare() { crds.Prepare(v1alpha1.GlanceKind) }
