package v1alpha1

import (
	"strings"

	"k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ReservedStoreSections are the config sections Glance and the operator own.
// A GlanceBackend's metadata.name becomes its [<name>] section, so these
// names are refused. oslo.config lower-cases group names when it looks them
// up, so the comparison ignores case.
var ReservedStoreSections = []string{
	"default", "database", "keystone_authtoken", "glance_store",
	"paste_deploy", "oslo_policy", "os_glance_staging_store", "os_glance_tasks_store",
}

// ReservedStorePrefixes are the name prefixes Glance owns for its staging and
// tasks stores.
var ReservedStorePrefixes = []string{"os_glance_", "os-glance-"}

// ValidateStoreName is the reserved-store-name collision guard on a
// GlanceBackend's metadata.name, plus the API server's own object-name rule.
func ValidateStoreName(name string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.NameIsDNSSubdomain(name, false) {
		errs = append(errs, field.Invalid(path, name, msg))
	}
	lower := strings.ToLower(name)
	for _, p := range ReservedStorePrefixes {
		if strings.HasPrefix(lower, p) {
			errs = append(errs, field.Invalid(path, name, MsgReservedStorePrefix))
			return errs
		}
	}
	for _, r := range ReservedStoreSections {
		if lower == r {
			errs = append(errs, field.Invalid(path, name, MsgReservedStoreName))
		}
	}
	return errs
}
