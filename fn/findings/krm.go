package findings

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Prefix starts every message that is not a field error's own text, so a
// user can search for the function's words and a tool can tell the two
// forms apart:
//   - about a field: "<field path>: <rule>", the API server's own words
//     (field.Error's text), with the field path set;
//   - anything else: "glance-krm: [<Reason>: ]<message>", the Reason being
//     the contract's (NoDefaultBackend, WaitingForParent) when there is one.
const Prefix = "glance-krm: "

// Tag keys on KRM results, so tools can filter without parsing messages.
const (
	TagRule   = "rule"
	TagReason = "reason"
)

// Ref is the object a finding is about, as a KRM result names it.
type Ref struct {
	APIVersion, Kind, Namespace, Name string
	// Path and Index are where the orchestrator read it from, when it
	// said.
	Path  string
	Index int
}

// About is a finding about an object, at the given level, under a rule.
func About(obj *fn.KubeObject, level, rule, msg string) Finding {
	ref := Ref{APIVersion: obj.GetAPIVersion(), Kind: obj.GetKind(), Namespace: obj.GetNamespace(), Name: obj.GetName()}
	if p := sourcePath(obj); p != "" {
		ref.Path, ref.Index = p, max(obj.IndexAnnotation(), 0)
	}
	return Finding{Rule: rule, Level: level, Message: msg, Ref: &ref}
}

// General is a finding about no object (the functionConfig, the run).
func General(level, rule, msg string) Finding {
	return Finding{Rule: rule, Level: level, Message: msg}
}

// Fields are one error finding per field error, its text (path, rule and
// value, in the API server's words) as the message.
func Fields(obj *fn.KubeObject, rule string, errs field.ErrorList) []Finding {
	out := make([]Finding, len(errs))
	for i, e := range errs {
		out[i] = About(obj, Error, rule, e.Error()).At(e.Field)
		out[i].FieldError = true
	}
	return out
}

// At names the field a finding is about.
func (f Finding) At(path string) Finding {
	f.Field = path
	return f
}

// Because names the contract's Reason of a finding.
func (f Finding) Because(reason string) Finding {
	f.Reason = reason
	return f
}

// HasErrors tells whether a finding is an error.
func HasErrors(fs []Finding) bool {
	return slices.ContainsFunc(fs, func(f Finding) bool { return f.Level == Error })
}

// sourcePath is the file an object was read from: kpt and kustomize set the
// internal annotation, older orchestrators the legacy one.
func sourcePath(obj *fn.KubeObject) string {
	if p := obj.GetAnnotation("internal.config.kubernetes.io/path"); p != "" {
		return p
	}
	return obj.GetAnnotation("config.kubernetes.io/path")
}

// userinfo matches the user:password@ part of a URL.
var userinfo = regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.-]*://)[^/@\s"']+@`)

var severity = map[string]fn.Severity{Error: fn.Error, Warning: fn.Warning, Note: fn.Info}

var severityRank = map[fn.Severity]int{fn.Error: 0, fn.Warning: 1, fn.Info: 2}

// Results is the one writer of KRM results: each finding becomes a result
// with its message in one of the two forms (Prefix), its rule and reason
// as tags, URL userinfo removed from the message (a result is printed on
// stderr and kept in kpt's results file), ordered so that the output does
// not depend on the order of the input: errors first, then by object,
// field and message. A finding without a rule is a defect of the
// function: an error, never a result.
func Results(fs []Finding) (fn.Results, error) {
	out := make(fn.Results, 0, len(fs))
	for _, f := range fs {
		if f.Rule == "" {
			return nil, fmt.Errorf("a finding without a rule id: %q", f.Message)
		}
		sev, ok := severity[f.Level]
		if !ok {
			return nil, fmt.Errorf("finding %q: unknown level %q", f.Rule, f.Level)
		}
		msg := f.Message
		if !f.FieldError && !strings.HasPrefix(msg, Prefix) {
			msg = Prefix + msg
		}
		r := &fn.Result{Message: userinfo.ReplaceAllString(msg, "${1}REDACTED@"), Severity: sev, Tags: map[string]string{TagRule: f.Rule}}
		if f.Reason != "" {
			r.Tags[TagReason] = f.Reason
		}
		if f.Ref != nil {
			r.ResourceRef = &fn.ResourceRef{APIVersion: f.Ref.APIVersion, Kind: f.Ref.Kind, Namespace: f.Ref.Namespace, Name: f.Ref.Name}
			if f.Ref.Path != "" {
				r.File = &fn.File{Path: f.Ref.Path, Index: f.Ref.Index}
			}
		}
		if f.Field != "" {
			r.Field = &fn.Field{Path: f.Field}
		}
		out = append(out, r)
	}
	sortResults(out)
	return out, nil
}

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

// Defect is the result of a finding Results could not write: the
// function's own defect, reported rather than lost.
func Defect(err error) *fn.Result {
	return &fn.Result{Severity: fn.Error, Message: err.Error(), Tags: map[string]string{TagRule: "defect"}}
}

// FromResult is the finding a KRM result reports, for the formats review
// tools read (validate reads the function's results): its rule or reason
// tag, else "schema" for a field, else the function's name.
func FromResult(r *fn.Result) Finding {
	f := Finding{Rule: cmp.Or(r.Tags[TagRule], r.Tags[TagReason]), Level: Note, Message: r.Message}
	switch r.Severity {
	case fn.Error:
		f.Level = Error
	case fn.Warning:
		f.Level = Warning
	}
	if f.Rule == "" && r.Field != nil && r.Field.Path != "" {
		f.Rule = "schema"
	}
	f.Rule = cmp.Or(f.Rule, strings.TrimSuffix(Prefix, ": "))
	return f
}
