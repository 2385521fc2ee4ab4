package v1alpha1

import (
	"fmt"
	"regexp"
	"sort"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

const (
	MaxExtraOptions      = 32
	MaxOptionKeyLength   = 256
	MaxOptionValueLength = 1024
)

var extraOptionKey = regexp.MustCompile(`^[A-Za-z0-9_]+$`)

// ExtraOptionOwners is the extraOptions denylist: each key the projection
// renders itself, with the spec field that owns it, so the escape hatch
// cannot silently contradict the typed spec. The typed fields' keys come
// from TypedStoreOptions, but the CA bundle's, which the seed's denylist
// leaves open.
var ExtraOptionOwners = extraOptionOwners()

func extraOptionOwners() map[string]string {
	owners := map[string]string{
		"s3_store_access_key": "spec.s3.credentialsSecretRef",
		"s3_store_secret_key": "spec.s3.credentialsSecretRef",
		"store_description":   "glance-krm (operator-owned; it names the GlanceBackend and its bucket)",
	}
	for _, o := range TypedStoreOptions {
		if o.Option != "s3_store_cacert" {
			owners[o.Option] = o.Field
		}
	}
	return owners
}

// OwnedOptionMessage is the denylist message for one key.
func OwnedOptionMessage(key, owner string) string {
	return fmt.Sprintf("option %q is owned by %s", key, owner)
}

// ValidateExtraOptions checks a GlanceBackend's extraOptions: the entry
// bound, the key and value length bounds, the key pattern (checked before
// the denylist, so an embedded newline or a denylist-evading trailing space
// cannot slip through), the denylist, and the INI-injection guard on values.
func ValidateExtraOptions(opts map[string]OptionValue, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(opts) > MaxExtraOptions {
		errs = append(errs, field.TooMany(path, len(opts), MaxExtraOptions))
	}
	for _, k := range sortedKeys(opts) {
		v := string(opts[k])
		kp := keyPath(path, k)
		if len([]rune(k)) > MaxOptionKeyLength {
			errs = append(errs, field.Invalid(kp, omit, MsgOptionKeyTooLong))
		}
		if !extraOptionKey.MatchString(k) {
			errs = append(errs, field.Invalid(kp, omit, MsgOptionKeyPattern))
		} else if owner, ok := ExtraOptionOwners[k]; ok {
			errs = append(errs, field.Forbidden(kp, OwnedOptionMessage(k, owner)))
		}
		errs = append(errs, maxLength(kp, v, MaxOptionValueLength)...)
		if hasCRLF(v) {
			errs = append(errs, field.Invalid(kp, omit, "value "+MsgINIInjection))
		}
	}
	return errs
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
