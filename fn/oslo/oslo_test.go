package oslo

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzOsloValue: every value the writer accepts reads back, by oslo.config's
// rules (below, mirrored from oslo_config; TestOsloConfigRoundTrip checks
// the same values against the real oslo.config), as exactly the input.
func FuzzOsloValue(f *testing.F) {
	for _, v := range Adversarial {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v string) {
		if !utf8.ValidString(v) {
			return // values come from YAML, which is UTF-8
		}
		enc, err := Value(v)
		if err != nil {
			if !strings.ContainsAny(v, "\r\n") {
				t.Fatalf("refused %q: %v", v, err)
			}
			return
		}
		line := "key = " + enc
		if enc == "" {
			line = "key ="
		}
		if strings.ContainsAny(line, "\r\n") {
			t.Fatalf("wrote a line break for %q", v)
		}
		if got := osloRead(line); got != v {
			t.Fatalf("wrote %q for %q, which oslo.config reads as %q", line, v, got)
		}
	})
}

// osloRead is oslo.config's reading of one "key = value" line: the
// iniparser's strip and quote removal, then _substitute's \$ handling and
// string.Template's $$ (there is nothing else to substitute in these values).
func osloRead(line string) string {
	line = strings.TrimRightFunc(line, IsPySpace)
	_, value, _ := strings.Cut(line, "=")
	value = strings.TrimFunc(value, IsPySpace)
	if len(value) > 0 && (value[0] == '"' || value[0] == '\'') && value[0] == value[len(value)-1] {
		if len(value) == 1 {
			value = ""
		} else {
			value = value[1 : len(value)-1]
		}
	}
	value = strings.ReplaceAll(value, `\$`, "$$")
	return strings.ReplaceAll(value, "$$", "$")
}
