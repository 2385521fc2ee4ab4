// Package render writes the files glance-api reads for one Image API of a
// Glance: backends.conf (its stores), glance-api.conf, and the paste,
// policy, logging and uWSGI files beside it, as the seed operator renders
// them. It is pure: types in, text out; nothing here reads or writes YAML.
package render

import (
	"fmt"

	"github.com/c5c3/glance-krm/fn/oslo"
	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

// Files are one API's rendered files and what they imply.
type Files struct {
	// BackendsConf is backends.conf: one section per store.
	BackendsConf string
	// Config is glance-api.conf and the files beside it, by file name.
	Config map[string]string
	// Egress is what the files make glance-api contact.
	Egress Egress
	// Options maps the OS_<GROUP>__<OPTION> variable of every option the
	// two INI files set to the option ("[section] key"): such a variable in
	// the container would silently win over the rendered file.
	Options map[string]string
}

// API renders the files of one Image API: the stores it serves, its
// default store, and the merged policy overrides (none: no policy file).
func API(g *v1alpha1.Glance, backends []*v1alpha1.GlanceBackend, defaultStore string, policy map[string]string) (Files, error) {
	backendsINI, apiINI := renderBackendsConf(g, backends), renderAPIConf(g, backends, defaultStore, len(policy) > 0)
	backendsConf, err := backendsINI.String()
	if err != nil {
		return Files{}, fmt.Errorf("rendering backends.conf: %w", err)
	}
	apiConf, err := apiINI.String()
	if err != nil {
		return Files{}, fmt.Errorf("rendering glance-api.conf: %w", err)
	}
	config, err := configFiles(&g.Spec, apiConf, policy)
	if err != nil {
		return Files{}, err
	}
	return Files{
		BackendsConf: backendsConf,
		Config:       config,
		Egress:       egressOf(&g.Spec, backendsINI, apiINI),
		Options:      optionVariables(backendsINI, apiINI),
	}, nil
}

// optionVariables maps the variable of every option in the files to the option.
func optionVariables(files ...*oslo.File) map[string]string {
	out := map[string]string{}
	for _, f := range files {
		for _, s := range f.Sections {
			for _, o := range s.Options {
				out[v1alpha1.OptionEnvName(s.Name, o.Key)] = fmt.Sprintf("[%s] %s", s.Name, o.Key)
			}
		}
	}
	return out
}
