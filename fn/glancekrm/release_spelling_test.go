package glancekrm

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kptdev/krm-functions-sdk/go/fn"

	"github.com/c5c3/glance-krm/krm/catalogs"
	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

// TestExtraConfigFileSpelling: oslo.config reads a command-line option
// from a file by its dest (use_json), never by its command-line spelling
// (use-json), in [DEFAULT] (oslo.log) as in any other section (the
// keystoneauth session options of [barbican_service_user]). On every
// release with a catalog, through the whole function, the file spelling
// renders and the command-line spelling fails the build naming the file
// spelling. A deprecated spelling oslo.config still reads, with a warning,
// is refused too: [DEFAULT] logdir for log_dir by the release rules, and
// [DEFAULT] sql_connection, which is [database] connection, by the
// owned-option rule before the release rules (as on a release without a
// catalog: TestDeprecatedSpellingsRefused). TestCatalogsReadByOsloConfig
// proves the catalogs right against each release's oslo.config.
func TestExtraConfigFileSpelling(t *testing.T) {
	for _, release := range catalogs.Releases() {
		for _, o := range []struct{ section, refused, file, by string }{
			{"DEFAULT", "use-json", "use_json", ""},
			{"DEFAULT", "log-date-format", "log_date_format", ""},
			{"barbican_service_user", "split-loggers", "split_loggers", ""},
			{"DEFAULT", "logdir", "log_dir", ""},
			{"DEFAULT", "sql_connection", "", `option "sql_connection" in section [DEFAULT] is a deprecated spelling of [database] connection`},
		} {
			t.Run(release+"/"+o.section+"/"+o.refused, func(t *testing.T) {
				glance := strings.Replace(testGlance, `"2025.2"`, `"`+release+`"`, 2) +
					fmt.Sprintf("  extraConfig: {%s: {%%s: 'true'}}\n", o.section)
				run := func(key string) (*fn.ResourceList, bool) {
					t.Helper()
					out, failed := runFn(t, resourceList(t, []byte(docs(fmt.Sprintf(glance, key), testBackend("primary", "glance", true)))))
					rl, err := fn.ParseResourceList(out)
					if err != nil {
						t.Fatal(err)
					}
					return rl, failed
				}

				if o.file != "" {
					rl, failed := run(o.file)
					if failed {
						t.Fatalf("[%s] %s refused:\n%s", o.section, o.file, resultLines(rl.Results))
					}
					conf := ""
					for _, obj := range rl.Items {
						if obj.GetLabel(v1alpha1.LabelComponent) == v1alpha1.ComponentConfig {
							conf, _, _ = obj.NestedString("data", v1alpha1.KeyGlanceAPIConf)
						}
					}
					if !strings.Contains(conf, "["+o.section+"]\n") || !strings.Contains(conf, "\n"+o.file+" = true\n") {
						t.Errorf("glance-api.conf lacks [%s] %s = true:\n%s", o.section, o.file, conf)
					}
				}

				rl, failed := run(o.refused)
				field := fmt.Sprintf("spec.extraConfig[%s][%s]", o.section, o.refused)
				var refused *fn.Result
				for _, r := range rl.Results {
					if r.Severity == fn.Error && r.Field != nil && r.Field.Path == field {
						refused = r
					}
				}
				by := o.by
				if by == "" {
					by = fmt.Sprintf("option %q is not an option of section [%s] in Glance %s", o.refused, o.section, release)
				}
				switch {
				case !failed || refused == nil:
					t.Errorf("[%s] %s not refused at %s (failed %v):\n%s", o.section, o.refused, field, failed, resultLines(rl.Results))
				case !strings.Contains(refused.Message, by):
					t.Errorf("[%s] %s refused by another rule: %s", o.section, o.refused, refused.Message)
				case o.file != "" && !strings.HasSuffix(refused.Message, fmt.Sprintf("did you mean %q?", o.file)):
					t.Errorf("[%s] %s refused without naming %s: %s", o.section, o.refused, o.file, refused.Message)
				}
			})
		}
	}
}

// TestRenderedOptionsInCatalog: every option the function renders into
// glance-api.conf (JSON logging names its logging.conf in
// log_config_append, an oslo.log command-line option) is one the
// release's catalog says Glance reads from a file: explain warns of
// "unknown-option" for any that is not, and the catalog, not the render,
// was wrong while it held the command-line spellings.
func TestRenderedOptionsInCatalog(t *testing.T) {
	for _, release := range catalogs.Releases() {
		t.Run(release, func(t *testing.T) {
			cat := catalogs.For(release)
			glance := strings.Replace(testGlance, `"2025.2"`, `"`+release+`"`, 2) + "  logging: {format: json}\n"
			out, failed := runFn(t, resourceList(t, []byte(docs(glance, testBackend("primary", "glance", true)))))
			rl, err := fn.ParseResourceList(out)
			if err != nil {
				t.Fatal(err)
			}
			if failed {
				t.Fatalf("refused:\n%s", resultLines(rl.Results))
			}
			conf := ""
			for _, obj := range rl.Items {
				if obj.GetLabel(v1alpha1.LabelComponent) == v1alpha1.ComponentConfig {
					conf, _, _ = obj.NestedString("data", v1alpha1.KeyGlanceAPIConf)
				}
			}
			sections, err := v1alpha1.ReadRenderedINI([]byte(conf))
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := sections["DEFAULT"]["log_config_append"]; !ok {
				t.Fatalf("JSON logging renders no log_config_append:\n%s", conf)
			}
			for _, s := range sortedNames(sections) {
				known, ok := cat.Section(s)
				if !ok {
					continue // a section the catalog does not describe: explain does not judge it either
				}
				for _, k := range sortedNames(sections[s]) {
					if _, ok := known[k]; !ok {
						t.Errorf("glance-api.conf renders [%s] %s, which krm/catalogs/%s.json says Glance does not read", s, k, release)
					}
				}
			}
		})
	}
}
