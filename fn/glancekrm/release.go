package glancekrm

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/kptdev/krm-functions-sdk/go/fn"

	"github.com/c5c3/glance-krm/fn/findings"
	"github.com/c5c3/glance-krm/krm/catalogs"
)

// The release rules: glance_store and oslo.config ignore an option they do
// not know without a word, so a misspelt or too-new option would silently
// do nothing in production. Each name in extraOptions and extraConfig,
// and each typed field, is checked against the option catalog of the
// Glance's openStackRelease (krm/catalogs); a release without a catalog
// gets one warning, never silence.

// ruleCatalog is the rule of an option the release does not read.
const ruleCatalog = "release-catalog"

// checkRelease reports every option name the Glance's release does not
// read; it refuses the Glance on an error.
func checkRelease(ge *glanceEntry) ([]findings.Finding, bool) {
	var results []findings.Finding
	g := ge.g
	cat := catalogs.For(g.Spec.OpenStackRelease)
	if cat == nil {
		results = append(results, findings.About(ge.obj, findings.Warning, ruleCatalog, fmt.Sprintf(
			"no option catalog for openStackRelease %q (catalogs: %s): the names in extraOptions and extraConfig are not checked against the options Glance reads",
			g.Spec.OpenStackRelease, strings.Join(catalogs.Releases(), ", "))).At("spec.openStackRelease"))
		return results, true
	}
	ok := true
	fail := func(obj *fn.KubeObject, field, msg string) {
		results = append(results, findings.About(obj, findings.Error, ruleCatalog, msg).At(field))
		ok = false
	}
	from := fmt.Sprintf("Glance %s (%s)", cat.Release, cat.Short())
	storeNames := sortedNames(cat.StoreOptions)
	for _, be := range ge.backends {
		b := be.b
		for _, k := range sortedNames(b.Spec.ExtraOptions) {
			if _, known := cat.StoreOptions[k]; !known {
				fail(be.obj, fmt.Sprintf("spec.extraOptions[%s]", k), fmt.Sprintf(
					"option %q is not an option of an S3 store in %s; glance_store would ignore it without a word%s",
					k, from, didYouMean(k, storeNames)))
			}
		}
		if b.Spec.S3 == nil {
			continue
		}
		for _, t := range b.StoreSettings() {
			if _, known := cat.StoreOptions[t.Option]; !known {
				fail(be.obj, t.Field, fmt.Sprintf("%s renders %s, which %s does not read (it would ignore it without a word): drop the field or raise openStackRelease",
					t.Field, t.Option, from))
			}
		}
	}
	sections := sortedNames(cat.Config)
	for _, section := range sortedNames(g.Spec.ExtraConfig) {
		opts, known := cat.Section(section)
		if !known {
			fail(ge.obj, fmt.Sprintf("spec.extraConfig[%s]", section), fmt.Sprintf(
				"section [%s] is not a section glance-api.conf has in %s; oslo.config would ignore it without a word%s",
				section, from, didYouMean(section, sections)))
			continue
		}
		names := sortedNames(opts)
		for _, k := range sortedNames(g.Spec.ExtraConfig[section]) {
			if _, known := opts[k]; !known {
				fail(ge.obj, fmt.Sprintf("spec.extraConfig[%s][%s]", section, k), fmt.Sprintf(
					"option %q is not an option of section [%s] in %s; oslo.config would ignore it without a word%s",
					k, section, from, didYouMean(k, names)))
			}
		}
	}
	return results, ok
}

func didYouMean(s string, names []string) string {
	if m := catalogs.Suggest(s, names); m != "" {
		return fmt.Sprintf("; did you mean %q?", m)
	}
	return ""
}

// sortedNames are a map's keys, sorted.
func sortedNames[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}
