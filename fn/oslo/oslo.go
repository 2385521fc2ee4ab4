// Package oslo writes INI files for oslo.config's parser: every value reads
// back, through oslo.config, as exactly the string given, or is refused.
// It is a leaf: it knows nothing of Glance, KRM or YAML.
package oslo

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

// File is an ordered list of sections; callers add them in the order
// they are to be written. Header lines are written first, as comments.
type File struct {
	Header   []string
	Sections []Section
}

// Section is one [name] of a File, with an optional comment above it.
type Section struct {
	Name    string
	Comment string
	Options []Option
}

// Option is one key = value line.
type Option struct{ Key, Value string }

// Set appends an option.
func (s *Section) Set(key, value string) {
	s.Options = append(s.Options, Option{key, value})
}

// Count is how many options the file holds.
func (f *File) Count() int {
	n := 0
	for _, s := range f.Sections {
		n += len(s.Options)
	}
	return n
}

// String renders the file. It fails rather than write a line oslo.config
// would read differently; validation reports such values earlier with a
// field path, so an error here is a bug in validation.
func (f *File) String() (string, error) {
	var b strings.Builder
	for _, h := range f.Header {
		b.WriteString("# " + h + "\n")
	}
	for i, s := range f.Sections {
		if i > 0 || len(f.Header) > 0 {
			b.WriteString("\n")
		}
		if s.Comment != "" {
			b.WriteString("# " + s.Comment + "\n")
		}
		if strings.ContainsAny(s.Name, "\r\n]") || s.Name == "" {
			return "", fmt.Errorf("section name %q cannot be written for oslo.config", s.Name)
		}
		b.WriteString("[" + s.Name + "]\n")
		for _, o := range s.Options {
			if !safeOptionName(o.Key) {
				return "", fmt.Errorf("option name %q in section [%s] cannot be written for oslo.config", o.Key, s.Name)
			}
			v, err := Value(o.Value)
			if err != nil {
				return "", fmt.Errorf("option %q in section [%s]: %w", o.Key, s.Name, err)
			}
			if v == "" {
				b.WriteString(o.Key + " =\n")
			} else {
				b.WriteString(o.Key + " = " + v + "\n")
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
	return strings.TrimFunc(k, IsPySpace) == k
}

// errUnrepresentable is returned for a value oslo.config cannot read back.
var errUnrepresentable = fmt.Errorf("value contains a newline or carriage return, which oslo.config cannot read back")

// Value encodes v so that oslo.config reads back exactly v.
func Value(v string) (string, error) {
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
	if IsPySpace(first) || IsPySpace(last) {
		return true
	}
	return first == last && (first == '"' || first == '\'')
}

// IsPySpace is Python's str.isspace for one character: Go's unicode.IsSpace
// plus the four information separators U+001C..U+001F. Erring towards
// "space" only adds quotes, which is always safe.
func IsPySpace(r rune) bool {
	return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f)
}
