package explain

import (
	"maps"
	"slices"

	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

// ConfigChange is one option of an Image API's glance-api.conf, before
// and after ("" when absent): every rendered option a change touches,
// not only the stores', since any of them changes what Glance does.
type ConfigChange struct {
	API     string `json:"api"`
	Section string `json:"section"`
	Option  string `json:"option"`
	Before  string `json:"before,omitempty"`
	After   string `json:"after,omitempty"`
}

// config is the Glance's glance-api.conf as every API renders it, the
// APIs merged (in name order, the first wins): what the release
// catalogs judge.
func (g *Glance) config() map[string]map[string]string {
	out := map[string]map[string]string{}
	for _, api := range slices.Sorted(maps.Keys(g.Config)) {
		for section, opts := range g.Config[api] {
			if out[section] == nil {
				out[section] = map[string]string{}
			}
			for k, v := range opts {
				if _, set := out[section][k]; !set {
					out[section][k] = v
				}
			}
		}
	}
	return out
}

// configChanges lists every option of glance-api.conf that differs, per
// Image API present on both sides (an API that comes or goes is told by
// its workload). A secret option's value is never shown, nor a URL's
// userinfo.
func configChanges(b, a *Glance) []ConfigChange {
	var out []ConfigChange
	for _, api := range union(b.Config, a.Config) {
		bc, ac := b.Config[api], a.Config[api]
		if bc == nil || ac == nil {
			continue
		}
		for _, section := range union(bc, ac) {
			for _, opt := range union(bc[section], ac[section]) {
				before, after := bc[section][opt], ac[section][opt]
				if before == after {
					continue
				}
				if hidden(opt) || v1alpha1.IsSecretOption(v1alpha1.ConfigOption{Section: section, Key: opt}) {
					before, after = mask(before), mask(after)
				}
				out = append(out, ConfigChange{API: api, Section: section, Option: opt, Before: redact(before), After: redact(after)})
			}
		}
	}
	return out
}
