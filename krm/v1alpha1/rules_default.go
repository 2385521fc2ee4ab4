package v1alpha1

import (
	"fmt"
	"sort"
	"strings"
)

// DefaultBackend is the exactly-one-default rule across the backends
// attached to one Glance. It returns the default store's name, or an error
// naming the Glance and every default (reason NoDefaultBackend). Sibling
// uniqueness is a cross-object rule that CEL cannot express: the function
// enforces it at build time and the controller reports it at runtime.
func DefaultBackend(glance string, backends []*GlanceBackend) (string, error) {
	var defaults []string
	for _, b := range backends {
		if b.Spec.IsDefault {
			defaults = append(defaults, b.Name)
		}
	}
	sort.Strings(defaults)
	switch len(defaults) {
	case 1:
		return defaults[0], nil
	case 0:
		if len(backends) == 0 {
			return "", fmt.Errorf("%s: no GlanceBackend is attached to Glance %q; %s",
				ReasonNoDefaultBackend, glance, MsgExactlyOneDefault)
		}
		return "", fmt.Errorf("%s: no GlanceBackend attached to Glance %q is marked isDefault; %s",
			ReasonNoDefaultBackend, glance, MsgExactlyOneDefault)
	default:
		return "", fmt.Errorf("%s: GlanceBackends %s attached to the same Glance %q are all marked isDefault; %s",
			ReasonNoDefaultBackend, quoteAll(defaults), glance, MsgExactlyOneDefault)
	}
}

func quoteAll(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}
