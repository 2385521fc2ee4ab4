package catalogs_test

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/c5c3/glance-krm/krm/catalogs"
)

// seedCatalog is the seed operator's option catalog of a release
// (krm/testdata/seed/catalogs: operators/glance/api/v1alpha1/catalogs at
// 1aea335 for 2025.2 and 2026.1, 4101d76 for 2026.2): option names per
// section, and the deprecated names it accepts with a warning.
type seedCatalog struct {
	Sections map[string]struct {
		Opts       []string          `json:"opts"`
		Deprecated map[string]string `json:"deprecated"`
	} `json:"sections"`
}

// catalogDifference is a class of options one catalog accepts and the
// other refuses, as docs/seed.md's "Option catalogs" table lists them.
type catalogDifference struct {
	name     string
	seedOnly bool // accepted by the seed, refused by glance-krm
	match    func(section, option string) bool
}

var storeTemplate = regexp.MustCompile(`^glance\.store\.[a-z0-9_]+\.store$`)

func in(section string, options ...string) func(string, string) bool {
	return func(s, o string) bool { return s == section && (len(options) == 0 || slices.Contains(options, o)) }
}

func anyOf(ms ...func(string, string) bool) func(string, string) bool {
	return func(s, o string) bool {
		return slices.ContainsFunc(ms, func(m func(string, string) bool) bool { return m(s, o) })
	}
}

var catalogDifferences = []catalogDifference{
	{"glance_store's per-driver template groups", true, func(s, _ string) bool { return storeTemplate.MatchString(s) }},
	{"library options of the release's own pins", true, anyOf(
		in("keystone_authtoken", "memcache_tls_allowed_ciphers", "memcache_tls_cafile", "memcache_tls_certfile", "memcache_tls_enabled", "memcache_tls_keyfile"),
		in("barbican", "cafile", "certfile", "collect_timing", "insecure", "keyfile", "split_loggers", "timeout"),
		in("database", "synchronous_reader"))},
	{"options registered at run time", false, anyOf(in("backend_defaults"), in("os_glance_staging_store"), in("os_glance_tasks_store"),
		in("keystone_authtoken", "auth_url", "default_domain_id", "default_domain_name", "domain_id", "domain_name", "password",
			"project_domain_id", "project_domain_name", "project_id", "project_name", "system_scope", "trust_id",
			"user_domain_id", "user_domain_name", "user_id", "username"))},
	{"the cinder store's options", false, func(s, o string) bool {
		return s == "cinder" || (s == "glance_store" && (strings.HasPrefix(o, "cinder_") || o == "rootwrap_config"))
	}},
	{"image-import plugin sections", false, anyOf(in("image_import_opts"), in("image_conversion"), in("inject_metadata_properties"),
		in("import_filtering_opts"), in("glance_download_properties"))},
	{"library options of Debian's packages", false, anyOf(in("oslo_messaging_rabbit", "ssl_enforce_hostname_verification"),
		in("oslo_middleware", "http_basic_auth_user_file", "max_request_body_size"), in("DEFAULT", "watch_log_file"),
		in("healthcheck", "path"), in("oslo_middleware_tracing"))},
}

// TestSeedCatalogDifferencesAreListed compares glance-krm's catalog of
// each release with the seed's, option by option: every difference must
// fall in a class of docs/seed.md's table (a deprecated name the seed
// accepts with a warning is one: glance-krm refuses deprecated names on
// purpose), and every class must still show.
func TestSeedCatalogDifferencesAreListed(t *testing.T) {
	doc, err := os.ReadFile("../../docs/seed.md")
	if err != nil {
		t.Fatal(err)
	}
	used := map[string]bool{}
	for _, rel := range []string{"2025.2", "2026.1", "2026.2"} {
		raw, err := os.ReadFile("../testdata/seed/catalogs/" + rel + ".json")
		if err != nil {
			t.Fatal(err)
		}
		var seed seedCatalog
		if err := json.Unmarshal(raw, &seed); err != nil {
			t.Fatal(err)
		}
		ours := catalogs.For(rel)
		if ours == nil {
			t.Fatalf("no catalog of %s", rel)
		}
		classify := func(section, option string, seedOnly bool) {
			for _, c := range catalogDifferences {
				if c.seedOnly == seedOnly && c.match(section, option) {
					used[c.name] = true
					return
				}
			}
			who := "glance-krm accepts, the seed refuses"
			if seedOnly {
				who = "the seed accepts, glance-krm refuses"
			}
			t.Errorf("%s: [%s] %s: %s, and no class of docs/seed.md lists it", rel, section, option, who)
		}
		for section, s := range seed.Sections {
			for _, o := range s.Opts {
				if _, ok := ours.Config[section][o]; !ok {
					classify(section, o, true)
				}
			}
			for o := range s.Deprecated {
				if _, ok := ours.Config[section][o]; !ok {
					used["deprecated names"] = true
				}
			}
		}
		for section, opts := range ours.Config {
			s := seed.Sections[section]
			for o := range opts {
				_, deprecated := s.Deprecated[o]
				if !slices.Contains(s.Opts, o) && !deprecated {
					classify(section, o, false)
				}
			}
		}
	}
	for _, c := range append(catalogDifferences, catalogDifference{name: "deprecated names"}) {
		if !used[c.name] {
			t.Errorf("class %q shows in no release any more: remove it here and from docs/seed.md", c.name)
		}
		if !strings.Contains(string(doc), "| "+c.name+" |") {
			t.Errorf("docs/seed.md's option catalogs table has no row %q", c.name)
		}
	}
}
