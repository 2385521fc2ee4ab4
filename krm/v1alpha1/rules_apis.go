package v1alpha1

import (
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ResolvedAPI is one Image API with its stores and default resolved
// against the GlanceBackends attached to the Glance.
type ResolvedAPI struct {
	GlanceAPISpec
	Stores  []string // attached backend names, sorted
	Default string
}

// ResolveAPIs applies the several-APIs rules that need the attached
// backends (the per-object ones are CEL on the Glance): every store an API
// names is attached to the Glance, and each API has exactly one default
// store among its own: its defaultBackend, else the Glance's default
// store (the GlanceBackend marked isDefault), which must then be one of
// the API's backends. glanceDefault is "" when the Glance has no single
// default (reported by DefaultBackend).
func ResolveAPIs(spec *GlanceSpec, attached []string, glanceDefault string, path *field.Path) ([]ResolvedAPI, field.ErrorList) {
	var errs field.ErrorList
	apis := spec.EffectiveAPIs()
	out := make([]ResolvedAPI, 0, len(apis))
	for i, api := range apis {
		p := path.Index(i)
		r := ResolvedAPI{GlanceAPISpec: api, Stores: slices.Sorted(slices.Values(attached))}
		if api.Backends != nil {
			r.Stores = nil
			for j, b := range api.Backends {
				if !slices.Contains(attached, b) {
					errs = append(errs, field.Invalid(p.Child("backends").Index(j), b,
						fmt.Sprintf("no GlanceBackend named %q is attached to this Glance (its spec.glanceRef): an API's backends must be attached to its Glance", b)))
					continue
				}
				r.Stores = append(r.Stores, b)
			}
			slices.Sort(r.Stores)
		}
		switch {
		case api.DefaultBackend != "":
			if !slices.Contains(attached, api.DefaultBackend) {
				errs = append(errs, field.Invalid(p.Child("defaultBackend"), api.DefaultBackend,
					fmt.Sprintf("no GlanceBackend named %q is attached to this Glance (its spec.glanceRef)", api.DefaultBackend)))
			}
			r.Default = api.DefaultBackend
		case glanceDefault == "":
		case slices.Contains(r.Stores, glanceDefault):
			r.Default = glanceDefault
		default:
			errs = append(errs, field.Invalid(p.Child("backends"), api.Backends, fmt.Sprintf(
				"API %q has no default store: its backends do not include %q, the GlanceBackend marked isDefault; set spec.apis[%d].defaultBackend to one of its backends (%s)",
				api.Name, glanceDefault, i, MsgExactlyOneDefault)))
		}
		out = append(out, r)
	}
	return out, errs
}
