package v1alpha1

import "gopkg.in/ini.v1"

// ReadRenderedINI reads a file glance-krm renders (backends.conf,
// glance-api.conf) back into section -> option -> value, values as
// written: no inline comments (oslo.config has none, so a '#' is part of a
// value) and quotes kept. The function's explain and the controller read
// the rendered files through it, so both see what glance-api sees. An
// empty DEFAULT section, which every INI file has for the reader, is left
// out.
func ReadRenderedINI(b []byte) (map[string]map[string]string, error) {
	f, err := ini.LoadSources(ini.LoadOptions{IgnoreInlineComment: true, PreserveSurroundedQuote: true, SpaceBeforeInlineComment: true}, b)
	if err != nil {
		return nil, err
	}
	out := map[string]map[string]string{}
	for _, s := range f.Sections() {
		if s.Name() == ini.DefaultSection && len(s.Keys()) == 0 {
			continue
		}
		opts := map[string]string{}
		for _, k := range s.Keys() {
			opts[k.Name()] = k.Value()
		}
		out[s.Name()] = opts
	}
	return out, nil
}
