package glancekrm

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// This file writes INI for oslo.config's parser (oslo_config/iniparser.py),
// not for a generic INI reader. gopkg.in/ini.v1's writer wraps values that
// hold a backtick in """...""" and values with '#' or ';' in backticks, both
// of which oslo.config would read back literally, so it cannot be used here.
//
// What oslo.config does to a value, and what we write so that it reads back
// exactly the string of the custom resource:
//   - it strips surrounding whitespace (Python's str.strip), then removes one
//     pair of matching surrounding quotes ("..." or '...'): a value with
//     surrounding whitespace, or one that starts and ends with the same quote
//     character, is wrapped in one more pair of double quotes;
//   - it replaces \$ with $$ and then expands $name / ${name} templates with
//     $$ as the escape: every literal $ is written as \$, which survives both
//     steps as one $ whatever precedes it (writing $$ would break after a
//     literal backslash);
//   - it splits lines on \n and \r (Python universal newlines) and joins
//     indented continuation lines: a value with a newline or carriage return
//     cannot be written and is refused; no line we write starts with
//     whitespace;
//   - '#' and ';' start a comment only at the start of a line, so they need
//     no escaping inside a value.

// iniFile is an ordered list of sections; callers add them in the order
// they are to be written.
type iniFile struct {
	header   []string
	sections []iniSection
}

type iniSection struct {
	name    string
	comment string
	options []iniOption
}

type iniOption struct{ key, value string }

func (s *iniSection) set(key, value string) {
	s.options = append(s.options, iniOption{key, value})
}

// String renders the file. It fails rather than write a line oslo.config
// would read differently; validation reports such values earlier with a
// field path, so an error here is a bug in validation.
func (f *iniFile) String() (string, error) {
	var b strings.Builder
	for _, h := range f.header {
		b.WriteString("# " + h + "\n")
	}
	for i, s := range f.sections {
		if i > 0 || len(f.header) > 0 {
			b.WriteString("\n")
		}
		if s.comment != "" {
			b.WriteString("# " + s.comment + "\n")
		}
		if strings.ContainsAny(s.name, "\r\n]") || s.name == "" {
			return "", fmt.Errorf("section name %q cannot be written for oslo.config", s.name)
		}
		b.WriteString("[" + s.name + "]\n")
		for _, o := range s.options {
			if !safeOptionName(o.key) {
				return "", fmt.Errorf("option name %q in section [%s] cannot be written for oslo.config", o.key, s.name)
			}
			v, err := osloValue(o.value)
			if err != nil {
				return "", fmt.Errorf("option %q in section [%s]: %w", o.key, s.name, err)
			}
			if v == "" {
				b.WriteString(o.key + " =\n")
			} else {
				b.WriteString(o.key + " = " + v + "\n")
			}
		}
	}
	return b.String(), nil
}

func safeOptionName(k string) bool {
	if k == "" || strings.ContainsAny(k, "=:\r\n") || strings.HasPrefix(k, "[") ||
		strings.HasPrefix(k, "#") || strings.HasPrefix(k, ";") {
		return false
	}
	return strings.TrimFunc(k, pyIsSpace) == k
}

// errUnrepresentable is returned for a value oslo.config cannot read back.
var errUnrepresentable = fmt.Errorf("value contains a newline or carriage return, which oslo.config cannot read back")

// osloValue encodes v so that oslo.config reads back exactly v.
func osloValue(v string) (string, error) {
	if strings.ContainsAny(v, "\r\n") {
		return "", errUnrepresentable
	}
	enc := strings.ReplaceAll(v, "$", `\$`)
	if needsQuotes(v) {
		enc = `"` + enc + `"`
	}
	return enc, nil
}

func needsQuotes(v string) bool {
	if v == "" {
		return false
	}
	first, _ := utf8.DecodeRuneInString(v)
	last, _ := utf8.DecodeLastRuneInString(v)
	if pyIsSpace(first) || pyIsSpace(last) {
		return true
	}
	return first == last && (first == '"' || first == '\'')
}

// pyIsSpace is Python's str.isspace for one character: Go's unicode.IsSpace
// plus the four information separators U+001C..U+001F. Erring towards
// "space" only adds quotes, which is always safe.
func pyIsSpace(r rune) bool {
	return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f)
}
