package v1alpha1

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The OpenAPI checks below word their details as the API server does
// ("should match '^https?://'"), so one corpus can expect one message from
// both verdicts.

var httpURL = regexp.MustCompile(`^https?://`)

func minLength1(path *field.Path, v string) field.ErrorList {
	if v == "" {
		return field.ErrorList{field.Invalid(path, v, "should be at least 1 chars long")}
	}
	return nil
}

func matches(path *field.Path, v string, re *regexp.Regexp) field.ErrorList {
	if !re.MatchString(v) {
		return field.ErrorList{field.Invalid(path, v, fmt.Sprintf("should match '%s'", re.String()))}
	}
	return nil
}

func minimum1(path *field.Path, v *int32) field.ErrorList {
	if v != nil && *v < 1 {
		return field.ErrorList{field.Invalid(path, *v, "should be greater than or equal to 1")}
	}
	return nil
}

func maxLength(path *field.Path, v string, limit int) field.ErrorList {
	// OpenAPI maxLength counts characters, not bytes.
	if utf8.RuneCountInString(v) > limit {
		return field.ErrorList{field.TooLong(path, "", limit)}
	}
	return nil
}

func hasCRLF(s string) bool { return strings.ContainsAny(s, "\r\n") }

// keyPath names a map entry. A key that is not a plain word is quoted, so
// that a path never carries a raw newline or space into a result.
func keyPath(path *field.Path, key string) *field.Path {
	if plainKey.MatchString(key) {
		return path.Key(key)
	}
	return path.Key(strconv.Quote(key))
}

var plainKey = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)

var omit = field.OmitValueType{}

// noCRLF is the INI-injection guard on a typed field glance-krm renders
// into a config file: oslo.config cannot read a line break back, and a
// carriage return would start a new line in its reader.
func noCRLF(path *field.Path, v string, limit int) field.ErrorList {
	errs := maxLength(path, v, limit)
	if hasCRLF(v) {
		errs = append(errs, field.Invalid(path, omit, MsgINIInjection))
	}
	return errs
}
