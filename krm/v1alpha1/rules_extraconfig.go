package v1alpha1

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

const (
	MaxExtraConfigSections = 32
	MaxExtraConfigOptions  = 64
)

var configName = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)

// GlanceOwnedOptions are the glance-api.conf options glance-krm renders from
// a typed field (or from the GlanceBackends), keyed by normalised section and
// option, with the owner a user should edit instead. Every deprecated
// spelling of one (GlanceDeprecatedOptions) is refused too: oslo.config
// still reads it as the option.
var GlanceOwnedOptions = map[ConfigOption]string{
	{"DEFAULT", "enabled_backends"}:                         "the GlanceBackends attached to this Glance (their spec.glanceRef)",
	{"glance_store", "default_backend"}:                     "the GlanceBackend marked spec.isDefault",
	{"keystone_authtoken", "auth_type"}:                     "spec.serviceUser (password, or v3applicationcredential with spec.serviceUser.applicationCredential)",
	{"keystone_authtoken", "auth_url"}:                      "spec.keystoneEndpoint",
	{"keystone_authtoken", "www_authenticate_uri"}:          "spec.keystonePublicEndpoint",
	{"keystone_authtoken", "username"}:                      "spec.serviceUser.username",
	{"keystone_authtoken", "project_name"}:                  "spec.serviceUser.projectName",
	{"keystone_authtoken", "user_domain_name"}:              "spec.serviceUser.userDomainName",
	{"keystone_authtoken", "project_domain_name"}:           "spec.serviceUser.projectDomainName",
	{"keystone_authtoken", "password"}:                      "spec.serviceUser.secretRef",
	{"keystone_authtoken", "application_credential_id"}:     "spec.serviceUser.applicationCredential",
	{"keystone_authtoken", "application_credential_name"}:   "spec.serviceUser.applicationCredential",
	{"keystone_authtoken", "application_credential_secret"}: "spec.serviceUser.applicationCredential",
	{"keystone_authtoken", "region_name"}:                   "spec.region",
	{"keystone_authtoken", "memcached_servers"}:             "spec.cache (servers or clusterRef)",
	{"database", "connection"}:                              "spec.database.secretRef",
	// The seed operator's Rejected keys: security policy or volume bounds
	// that a typed field owns (its config_ownership.go).
	{"DEFAULT", "image_cache_dir"}:                      "spec.imageCache",
	{"DEFAULT", "image_cache_driver"}:                   "spec.imageCache",
	{"DEFAULT", "image_cache_max_size"}:                 "spec.imageCache",
	{"import_filtering_opts", "allowed_schemes"}:        "spec.importFiltering",
	{"import_filtering_opts", "disallowed_schemes"}:     "spec.importFiltering",
	{"import_filtering_opts", "allowed_hosts"}:          "spec.importFiltering",
	{"import_filtering_opts", "disallowed_hosts"}:       "spec.importFiltering",
	{"import_filtering_opts", "allowed_ports"}:          "spec.importFiltering",
	{"import_filtering_opts", "disallowed_ports"}:       "spec.importFiltering",
	{"image_import_opts", "image_import_plugins"}:       "spec.importPlugins",
	{"image_conversion", "output_format"}:               "spec.importPlugins",
	{"inject_metadata_properties", "inject"}:            "spec.importPlugins",
	{"inject_metadata_properties", "ignore_user_roles"}: "spec.importPlugins",
}

// ConfigOption is one option of one section.
type ConfigOption struct{ Section, Key string }

// Normalize folds a section name the way oslo.config looks groups up:
// lower-cased, except DEFAULT. Owned-option checks compare normalised names
// so that "[Keystone_AuthToken] auth_url" cannot slip past them. Option
// names are matched exactly, as oslo.config reads them from files.
func (o ConfigOption) Normalize() ConfigOption {
	if o.Section != "DEFAULT" {
		o.Section = strings.ToLower(o.Section)
	}
	return o
}

// OwnedConfigMessage is the message for an extraConfig option that a typed
// field owns.
func OwnedConfigMessage(o ConfigOption, owner string) string {
	return fmt.Sprintf("option %q in section [%s] is owned by %s", o.Key, o.Section, owner)
}

// DeprecatedOwnedConfigMessage is the message for a deprecated spelling
// (section folded) of an option that a typed field owns: oslo.config still
// reads it, so it would set the option behind the field's back, or be
// silently outranked by it.
func DeprecatedOwnedConfigMessage(spelling, o ConfigOption, owner string) string {
	return fmt.Sprintf("option %q in section [%s] is a deprecated spelling of [%s] %s, which oslo.config still reads; "+
		"that option is owned by %s", spelling.Key, spelling.Section, o.Section, o.Key, owner)
}

// ownedConfigMessage is the message refusing an extraConfig option that a
// typed field owns, under its name or under a deprecated spelling, or "".
func ownedConfigMessage(o ConfigOption) string {
	n := o.Normalize()
	if owner, ok := GlanceOwnedOptions[n]; ok {
		return OwnedConfigMessage(o, owner)
	}
	if cur, ok := GlanceDeprecatedOptions[n]; ok {
		if owner, ok := GlanceOwnedOptions[cur]; ok {
			return DeprecatedOwnedConfigMessage(n, cur, owner)
		}
	}
	return ""
}

// IsSecretOption tells whether Glance registers the option with
// secret=True, under this name or a deprecated spelling: such a value must
// not land in the plain ConfigMap.
func IsSecretOption(o ConfigOption) bool {
	n := o.Normalize()
	return slices.Contains(GlanceSecretOptions[n.Section], n.Key)
}

// SecretConfigMessage is the message for a secret option in extraConfig,
// one per section as the CRD's CEL rules word it: it lists the section's
// secret options that no typed field owns (under any spelling), and says
// where they belong.
func SecretConfigMessage(section string) string {
	var opts []string
	for _, k := range GlanceSecretOptions[section] {
		if ownedConfigMessage(ConfigOption{section, k}) == "" {
			opts = append(opts, k)
		}
	}
	return fmt.Sprintf("section [%s] holds an option Glance marks secret (%s): extraConfig is rendered into a plain ConfigMap; "+
		"put it in an INI file in a Secret of your own, mount that into the glance-api container and add --config-dir for its folder to the container's args",
		section, strings.Join(opts, ", "))
}

// ValidateExtraConfig checks a Glance's extraConfig: bounds, the INI
// injection guard on section, option and value, the name patterns, and the
// options glance-krm owns.
func ValidateExtraConfig(cfg map[string]ConfigSection, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(cfg) > MaxExtraConfigSections {
		errs = append(errs, field.TooMany(path, len(cfg), MaxExtraConfigSections))
	}
	for _, section := range sortedKeys(cfg) {
		sp := keyPath(path, section)
		errs = append(errs, validateConfigName(section, sp, "section", MsgSectionPattern)...)
		opts := cfg[section]
		if len(opts) > MaxExtraConfigOptions {
			errs = append(errs, field.TooMany(sp, len(opts), MaxExtraConfigOptions))
		}
		for _, key := range sortedKeys(opts) {
			kp := keyPath(sp, key)
			keyErrs := validateConfigName(key, kp, "option name", MsgConfigKeyPattern)
			errs = append(errs, keyErrs...)
			if len(keyErrs) == 0 {
				o := ConfigOption{section, key}
				if msg := ownedConfigMessage(o); msg != "" {
					errs = append(errs, field.Forbidden(kp, msg))
				} else if IsSecretOption(o) {
					errs = append(errs, field.Forbidden(kp, SecretConfigMessage(o.Normalize().Section)))
				}
			}
			v := string(opts[key])
			errs = append(errs, maxLength(kp, v, MaxOptionValueLength)...)
			if hasCRLF(v) {
				errs = append(errs, field.Invalid(kp, omit, "value "+MsgINIInjection))
			}
		}
	}
	return errs
}

func validateConfigName(name string, path *field.Path, what, patternMsg string) field.ErrorList {
	switch {
	case hasCRLF(name):
		return field.ErrorList{field.Invalid(path, omit, what+" "+MsgINIInjection)}
	case len(name) > MaxOptionKeyLength:
		return field.ErrorList{field.Invalid(path, omit, what+" must be at most 256 characters")}
	case !configName.MatchString(name):
		return field.ErrorList{field.Invalid(path, omit, patternMsg)}
	}
	return nil
}

// ValidateExtraConfigStores is the cross-object half: a store's [<name>]
// section belongs to its GlanceBackend, so extraConfig may not write it.
func ValidateExtraConfigStores(cfg map[string]ConfigSection, stores []string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	owned := map[string]string{}
	for _, s := range stores {
		owned[strings.ToLower(s)] = s
	}
	for _, section := range sortedKeys(cfg) {
		if store, ok := owned[ConfigOption{Section: section}.Normalize().Section]; ok {
			errs = append(errs, field.Forbidden(keyPath(path, section), fmt.Sprintf(
				"section [%s] is owned by GlanceBackend %q; set store options in its spec.extraOptions", section, store)))
		}
	}
	return errs
}
