package glancekrm

import (
	"cmp"
	"regexp"
	"slices"
	"strings"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Tag keys on results, so tools can filter without parsing messages.
const (
	tagRule   = "rule"
	tagReason = "reason"
)

// Result messages come in one of two forms, so a user can search for them
// and a tool can tell them apart (TestGolden holds every golden case to
// it):
//   - about a field: "<field path>: <rule>", the API server's own words
//     (field.Error's text), with field.path set;
//   - anything else: "glance-krm: [<Reason>: ]<message>", the Reason being
//     the contract's (NoDefaultBackend, WaitingForParent) when there is one.
//
// prefixed gives a message the second form.
func prefixed(msg string) string {
	if strings.HasPrefix(msg, Name+": ") {
		return msg
	}
	return Name + ": " + msg
}

// objectResult is a result about one object: resourceRef always, and file
// only when the orchestrator annotated where the object came from.
func objectResult(obj *fn.KubeObject, sev fn.Severity, msg string) *fn.Result {
	r := &fn.Result{
		Message:  prefixed(msg),
		Severity: sev,
		ResourceRef: &fn.ResourceRef{
			APIVersion: obj.GetAPIVersion(),
			Kind:       obj.GetKind(),
			Name:       obj.GetName(),
			Namespace:  obj.GetNamespace(),
		},
	}
	if p := sourcePath(obj); p != "" {
		r.File = &fn.File{Path: p, Index: max(obj.IndexAnnotation(), 0)}
	}
	return r
}

// fieldResults turns field errors into one error result each, with the
// field path, and the error's own text as message so it carries the path,
// the rule and the value a user can search for.
func fieldResults(obj *fn.KubeObject, errs field.ErrorList) fn.Results {
	var out fn.Results
	for _, e := range errs {
		r := objectResult(obj, fn.Error, "")
		r.Message, r.Field = e.Error(), &fn.Field{Path: e.Field}
		out = append(out, r)
	}
	return out
}

// withField names the field an object-level result is about; its
// message keeps the glance-krm form.
func withField(r *fn.Result, path string) *fn.Result {
	r.Field = &fn.Field{Path: path}
	return r
}

// userinfo matches the user:password@ part of a URL.
var userinfo = regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.-]*://)[^/@\s"']+@`)

// redactResults removes URL userinfo from every message: a result is
// printed on stderr and kept in kpt's results file, and a URL with a
// password in it must not be echoed there.
func redactResults(rs fn.Results) {
	for _, r := range rs {
		r.Message = userinfo.ReplaceAllString(r.Message, "${1}REDACTED@")
	}
}

func withTag(r *fn.Result, k, v string) *fn.Result {
	if r.Tags == nil {
		r.Tags = map[string]string{}
	}
	r.Tags[k] = v
	return r
}

// sourcePath is the file an object was read from: kpt and kustomize set the
// internal annotation, older orchestrators the legacy one.
func sourcePath(obj *fn.KubeObject) string {
	if p := obj.GetAnnotation("internal.config.kubernetes.io/path"); p != "" {
		return p
	}
	return obj.GetAnnotation("config.kubernetes.io/path")
}

var severityRank = map[fn.Severity]int{fn.Error: 0, fn.Warning: 1, fn.Info: 2}

// sortResults orders results so that output does not depend on the order
// of the input items: errors first, then by object, field and message.
func sortResults(rs fn.Results) {
	ref := func(r *fn.Result) (s [4]string) {
		if r.ResourceRef != nil {
			s = [4]string{r.ResourceRef.Kind, r.ResourceRef.Namespace, r.ResourceRef.Name, r.ResourceRef.APIVersion}
		}
		return s
	}
	fieldOf := func(r *fn.Result) string {
		if r.Field != nil {
			return r.Field.Path
		}
		return ""
	}
	slices.SortStableFunc(rs, func(a, b *fn.Result) int {
		ra, rb := ref(a), ref(b)
		return cmp.Or(
			cmp.Compare(severityRank[a.Severity], severityRank[b.Severity]),
			slices.Compare(ra[:], rb[:]),
			cmp.Compare(fieldOf(a), fieldOf(b)),
			cmp.Compare(a.Message, b.Message),
		)
	})
}

func hasErrors(rs fn.Results) bool {
	for _, r := range rs {
		if r.Severity == fn.Error {
			return true
		}
	}
	return false
}
