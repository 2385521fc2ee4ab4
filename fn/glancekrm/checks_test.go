package glancekrm

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kptdev/krm-functions-sdk/go/fn"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/c5c3/glance-krm/fn/findings"
	"github.com/c5c3/glance-krm/fn/glancekrm/decode"
	"github.com/c5c3/glance-krm/internal/fntest"
	"github.com/c5c3/glance-krm/krm/catalogs"
	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

// entry is a Glance of the release with the given stores, as the
// inventory hands it to the checks.
func entry(t *testing.T, release string, edit func(*v1alpha1.GlanceSpec), stores ...*v1alpha1.GlanceBackend) *glanceEntry {
	t.Helper()
	obj, err := fn.ParseKubeObject([]byte(fntest.Glance))
	if err != nil {
		t.Fatal(err)
	}
	g := &v1alpha1.Glance{}
	g.Name, g.Namespace = obj.GetName(), obj.GetNamespace()
	g.Spec.OpenStackRelease = release
	if edit != nil {
		edit(&g.Spec)
	}
	if g.Spec.Image.Repository == "" {
		g.Spec.Image = v1alpha1.ImageSpec{Repository: "ghcr.io/c5c3/glance", Tag: release}
	}
	ge := &glanceEntry{obj: obj, g: g, valid: true, names: []string{g.Name}}
	for _, b := range stores {
		bo, err := fn.ParseKubeObject([]byte(fntest.Backend(b.Name, g.Name, b.Spec.IsDefault)))
		if err != nil {
			t.Fatal(err)
		}
		ge.backends = append(ge.backends, &backendEntry{obj: bo, b: b, valid: true})
	}
	return ge
}

func s3Store(name string, isDefault bool, extra map[string]v1alpha1.OptionValue) *v1alpha1.GlanceBackend {
	b := &v1alpha1.GlanceBackend{}
	b.Name = name
	b.Spec = v1alpha1.GlanceBackendSpec{Type: "S3", IsDefault: isDefault, ExtraOptions: extra,
		S3: &v1alpha1.S3BackendSpec{Host: "https://s3.example.com", Bucket: name}}
	return b
}

// levels are the findings as "<level> <field>".
func levels(fs []findings.Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Level+" "+f.Field)
	}
	return out
}

func TestCheckRelease(t *testing.T) {
	for name, c := range map[string]struct {
		release string
		edit    func(*v1alpha1.GlanceSpec)
		extra   map[string]v1alpha1.OptionValue
		ok      bool
		want    []string
		message string
	}{
		"known options": {release: "2025.2", ok: true,
			extra: map[string]v1alpha1.OptionValue{"s3_store_large_object_size": "100"}},
		"a misspelt store option": {release: "2025.2", extra: map[string]v1alpha1.OptionValue{"s3_store_large_object_sise": "100"},
			want: []string{"error spec.extraOptions[s3_store_large_object_sise]"}, message: `did you mean "s3_store_large_object_size"?`},
		"an unknown section": {release: "2025.2", edit: func(s *v1alpha1.GlanceSpec) {
			s.ExtraConfig = map[string]v1alpha1.ConfigSection{"oslo_polcy": {"enforce_scope": "true"}}
		}, want: []string{"error spec.extraConfig[oslo_polcy]"}, message: `did you mean "oslo_policy"?`},
		"an unknown option of a known section": {release: "2025.2", edit: func(s *v1alpha1.GlanceSpec) {
			s.ExtraConfig = map[string]v1alpha1.ConfigSection{"DEFAULT": {"no_such_option": "1"}}
		}, want: []string{"error spec.extraConfig[DEFAULT][no_such_option]"}, message: "oslo.config would ignore it"},
		"a release without a catalog": {release: "2099.1", ok: true,
			want: []string{"warning spec.openStackRelease"}, message: "no option catalog"},
	} {
		t.Run(name, func(t *testing.T) {
			rs, ok := checkRelease(entry(t, c.release, c.edit, s3Store("fast", true, c.extra)))
			if ok != c.ok {
				t.Errorf("ok = %v, want %v", ok, c.ok)
			}
			if diff := cmp.Diff(c.want, levels(rs)); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
			if c.message != "" && (len(rs) == 0 || !strings.Contains(rs[0].Message, c.message)) {
				t.Errorf("message %v, want one containing %q", rs, c.message)
			}
		})
	}
}

func TestPolicyRules(t *testing.T) {
	cm := func(data string) *fn.KubeObject {
		o, err := fn.ParseKubeObject([]byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: policy, namespace: ns}\n" + data))
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	ref := &corev1.LocalObjectReference{Name: "policy"}
	for name, c := range map[string]struct {
		overrides *v1alpha1.PolicySpec
		configMap *fn.KubeObject
		want      map[string]string
		err       string
	}{
		"none":        {},
		"inline only": {overrides: &v1alpha1.PolicySpec{Rules: map[string]string{"a": "role:x"}}, want: map[string]string{"a": "role:x"}},
		"inline over the ConfigMap's": {overrides: &v1alpha1.PolicySpec{ConfigMapRef: ref, Rules: map[string]string{"a": "role:x"}},
			configMap: cm("data:\n  policy.yaml: |\n    a: role:y\n    b: role:z\n"), want: map[string]string{"a": "role:x", "b": "role:z"}},
		"the ConfigMap is not in the input": {overrides: &v1alpha1.PolicySpec{ConfigMapRef: ref}, err: "is not in the input"},
		"no policy.yaml key": {overrides: &v1alpha1.PolicySpec{ConfigMapRef: ref}, configMap: cm("data: {other: x}\n"),
			err: "has no data key policy.yaml"},
		"not a mapping": {overrides: &v1alpha1.PolicySpec{ConfigMapRef: ref}, configMap: cm("data:\n  policy.yaml: '- a'\n"),
			err: "is not a mapping of rule names to rule strings"},
	} {
		t.Run(name, func(t *testing.T) {
			inv := &inventory{configMaps: map[objKey]*fn.KubeObject{}}
			if c.configMap != nil {
				inv.configMaps[objKey{"ns", "policy"}] = c.configMap
			}
			ge := entry(t, "2025.2", func(s *v1alpha1.GlanceSpec) { s.PolicyOverrides = c.overrides })
			got, ferr := policyRules(inv, ge)
			if c.err != "" {
				if ferr == nil || !strings.Contains(ferr.Error(), c.err) || ferr.Field != "spec.policyOverrides.configMapRef.name" {
					t.Fatalf("error %v, want one on spec.policyOverrides.configMapRef.name containing %q", ferr, c.err)
				}
				return
			}
			if ferr != nil {
				t.Fatal(ferr)
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("rules (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCheckMetadef(t *testing.T) {
	for name, c := range map[string]struct {
		mode   string
		policy map[string]string
		ok     bool
		want   []string
	}{
		"no overrides":              {ok: true},
		"admin-only metadef writes": {policy: map[string]string{"add_metadef_namespace": "role:admin"}, ok: true},
		"opened, AdminOnly refuses": {policy: map[string]string{"add_metadef_namespace": "role:member"},
			want: []string{"error spec.policyOverrides"}},
		"opened, PolicyOverrides warns": {mode: v1alpha1.MetadefWritesPolicyOverrides, policy: map[string]string{"add_metadef_namespace": "role:member"},
			ok: true, want: []string{"warning spec.policyOverrides"}},
	} {
		t.Run(name, func(t *testing.T) {
			ge := entry(t, "2025.2", func(s *v1alpha1.GlanceSpec) { s.MetadefWrites = c.mode })
			rs, ok := checkMetadef(ge, c.policy)
			if ok != c.ok {
				t.Errorf("ok = %v, want %v", ok, c.ok)
			}
			if diff := cmp.Diff(c.want, levels(rs)); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCheckChain(t *testing.T) {
	for name, c := range map[string]struct {
		stores []*v1alpha1.GlanceBackend
		broken []string
		edit   func(*v1alpha1.GlanceSpec)
		valid  bool
		rules  []string // the rule tags of the errors
	}{
		"one default":    {stores: []*v1alpha1.GlanceBackend{s3Store("fast", true, nil), s3Store("slow", false, nil)}, valid: true},
		"two defaults":   {stores: []*v1alpha1.GlanceBackend{s3Store("fast", true, nil), s3Store("slow", true, nil)}, rules: []string{"exactly-one-default"}},
		"no default":     {stores: []*v1alpha1.GlanceBackend{s3Store("fast", false, nil)}, rules: []string{"exactly-one-default"}},
		"a broken store": {stores: []*v1alpha1.GlanceBackend{s3Store("fast", true, nil)}, broken: []string{"slow"}, rules: []string{"backend-unreadable"}},
		"an image reference a kubelet cannot pull": {stores: []*v1alpha1.GlanceBackend{s3Store("fast", true, nil)},
			edit: func(s *v1alpha1.GlanceSpec) {
				s.Image = v1alpha1.ImageSpec{Repository: "ghcr.io/c5c3:glance", Tag: "2025.2"}
			},
			rules: []string{"image-reference"}},
		"a registry port is fine": {stores: []*v1alpha1.GlanceBackend{s3Store("fast", true, nil)}, valid: true,
			edit: func(s *v1alpha1.GlanceSpec) {
				s.Image = v1alpha1.ImageSpec{Repository: "registry:5000/c5c3/glance", Tag: "2025.2"}
			}},
		"extraConfig writes a store's section": {stores: []*v1alpha1.GlanceBackend{s3Store("fast", true, nil)},
			edit: func(s *v1alpha1.GlanceSpec) {
				s.ExtraConfig = map[string]v1alpha1.ConfigSection{"fast": {"s3_store_host": "x"}}
			},
			rules: []string{"extraconfig-store-section", "release-catalog"}},
	} {
		t.Run(name, func(t *testing.T) {
			ge := entry(t, "2025.2", c.edit, c.stores...)
			ge.broken = c.broken
			rs, valid := runChecks(ge)
			if valid != c.valid {
				t.Errorf("valid = %v, want %v: %v", valid, c.valid, rs)
			}
			var rules []string
			for _, r := range rs {
				if r.Level == findings.Error {
					rules = append(rules, r.Rule)
				}
			}
			if diff := cmp.Diff(c.rules, rules); diff != "" {
				t.Errorf("rules (-want +got):\n%s\n%v", diff, rs)
			}
		})
	}
}

// LP #2047688, LP #2131085: debug on with S3 stores warns on the releases
// whose debug log holds the stores' keys, wherever debug was turned on.
func TestCheckDebugLogsStoreKeys(t *testing.T) {
	on, off := true, false
	debug := func(v *bool, extra string) func(*v1alpha1.GlanceSpec) {
		return func(s *v1alpha1.GlanceSpec) {
			s.Logging = &v1alpha1.LoggingSpec{Debug: v}
			if extra != "" {
				s.ExtraConfig = map[string]v1alpha1.ConfigSection{"DEFAULT": {"debug": v1alpha1.OptionValue(extra)}}
			}
		}
	}
	stores := []*v1alpha1.GlanceBackend{s3Store("fast", true, nil)}
	for name, c := range map[string]struct {
		release string
		edit    func(*v1alpha1.GlanceSpec)
		stores  []*v1alpha1.GlanceBackend
		want    []string
	}{
		"2025.2, spec.logging.debug":          {"2025.2", debug(&on, ""), stores, []string{"warning spec.logging.debug"}},
		"2022.2, spec.logging.debug":          {"2022.2", debug(&on, ""), stores, []string{"warning spec.logging.debug"}},
		"2026.1, extraConfig True":            {"2026.1", debug(nil, "True"), stores, []string{"warning spec.extraConfig[DEFAULT][debug]"}},
		"extraConfig false wins over logging": {"2025.2", debug(&on, "false"), stores, nil},
		"debug off":                           {"2025.2", debug(&off, ""), stores, nil},
		"2026.2 too (measured)":               {"2026.2", debug(&on, ""), stores, []string{"warning spec.logging.debug"}},
		"a release before the catalogs":       {"2021.2", debug(&on, ""), stores, nil},
		"no store: no location to log":        {"2025.2", debug(&on, ""), nil, nil},
	} {
		t.Run(name, func(t *testing.T) {
			rs, ok := checkDebugLogsStoreKeys(entry(t, c.release, c.edit, c.stores...))
			if !ok {
				t.Error("a warning refused the Glance")
			}
			if diff := cmp.Diff(c.want, levels(rs)); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
			for _, r := range rs {
				if !strings.Contains(r.Message, "Glance "+c.release) || !strings.Contains(r.Message, "LP #2047688") {
					t.Errorf("the warning does not name the release and the bug: %s", r.Message)
				}
			}
		})
	}
}

// spec.apiServer.workers is warned of where uWSGI runs glance-api, and
// only there.
func TestWorkersUnderUWSGI(t *testing.T) {
	workers := func(s *v1alpha1.GlanceSpec) { s.APIServer = &v1alpha1.APIServerSpec{Workers: ptr.To(int32(4))} }
	for name, c := range map[string]struct {
		release string
		edit    func(*v1alpha1.GlanceSpec)
		want    []string
	}{
		"2026.1 with workers": {"2026.1", workers, []string{"warning spec.apiServer.workers"}},
		"2026.2 with workers": {"2026.2", workers, []string{"warning spec.apiServer.workers"}},
		"2025.2 with workers": {"2025.2", workers, nil},
		"2026.1 without":      {"2026.1", nil, nil},
	} {
		t.Run(name, func(t *testing.T) {
			rs, ok := checkWorkersUnderUWSGI(entry(t, c.release, c.edit))
			if !ok {
				t.Error("a warning refused the Glance")
			}
			if diff := cmp.Diff(c.want, levels(rs)); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
			for _, r := range rs {
				if !strings.Contains(r.Message, "2 processes of 16 threads") {
					t.Errorf("the warning does not say what sizes the API: %s", r.Message)
				}
			}
		})
	}
}

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
				glance := strings.Replace(fntest.Glance, `"2025.2"`, `"`+release+`"`, 2) +
					fmt.Sprintf("  extraConfig: {%s: {%%s: 'true'}}\n", o.section)
				run := func(key string) (*fn.ResourceList, bool) {
					t.Helper()
					out, failed := runFn(t, fntest.ResourceList(t, []byte(fntest.Docs(fmt.Sprintf(glance, key), fntest.Backend("primary", "glance", true)))))
					rl, err := fn.ParseResourceList(out)
					if err != nil {
						t.Fatal(err)
					}
					return rl, failed
				}

				if o.file != "" {
					rl, failed := run(o.file)
					if failed {
						t.Fatalf("[%s] %s refused:\n%s", o.section, o.file, fntest.ResultLines(rl.Results))
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
					t.Errorf("[%s] %s not refused at %s (failed %v):\n%s", o.section, o.refused, field, failed, fntest.ResultLines(rl.Results))
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
			glance := strings.Replace(fntest.Glance, `"2025.2"`, `"`+release+`"`, 2) + "  logging: {format: json}\n"
			out, failed := runFn(t, fntest.ResourceList(t, []byte(fntest.Docs(glance, fntest.Backend("primary", "glance", true)))))
			rl, err := fn.ParseResourceList(out)
			if err != nil {
				t.Fatal(err)
			}
			if failed {
				t.Fatalf("refused:\n%s", fntest.ResultLines(rl.Results))
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

// TestUpgradePathUnderKpt: the package keeps the previous render, so a
// change of openStackRelease is judged from the release it was rendered
// for: the next release and SLURP to SLURP pass, a skip and a downgrade
// are refused on spec.openStackRelease with the seed's reasons, and a
// refused change leaves the package as it was. Under kustomize (no
// previous render in the input) nothing is judged.
func TestUpgradePathUnderKpt(t *testing.T) {
	s := newState(t, "testdata/standalone/input.yaml")
	// The hand-written workload names no image of its own: spec.image
	// follows the release here (a tag naming another release is refused).
	containers, _, err := s.object("Deployment", "glance").NestedSlice("spec", "template", "spec", "containers")
	if err != nil || len(containers) == 0 {
		t.Fatalf("the Deployment's containers: %v", err)
	}
	for _, c := range containers {
		if _, err := c.RemoveNestedField("image"); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.object("Deployment", "glance").SetNestedField(containers, "spec", "template", "spec", "containers"); err != nil {
		t.Fatal(err)
	}
	try := func(release string) fn.Results {
		t.Helper()
		s.set("Glance", "glance", release, "spec", "openStackRelease")
		s.set("Glance", "glance", release, "spec", "image", "tag")
		b, err := s.rl.ToYAML()
		if err != nil {
			t.Fatal(err)
		}
		out, failed := runFn(t, b)
		rl, err := fn.ParseResourceList(out)
		if err != nil {
			t.Fatal(err)
		}
		if !failed {
			s.rl = rl
			s.rl.Results = nil
			return nil
		}
		return rl.Results
	}
	refused := func(rs fn.Results, reason string, words ...string) {
		t.Helper()
		for _, r := range rs {
			if r.Severity == fn.Error && r.Tags["reason"] == reason && r.Field != nil && r.Field.Path == "spec.openStackRelease" {
				for _, w := range words {
					if !strings.Contains(r.Message, w) {
						t.Errorf("the %s result does not say %q: %s", reason, w, r.Message)
					}
				}
				return
			}
		}
		t.Errorf("no error with reason %s on spec.openStackRelease; results: %v", reason, rs)
	}
	for _, ok := range []string{"2025.1", "2025.2", "2026.1"} {
		if rs := try(ok); rs != nil {
			t.Fatalf("%s after the previous render was refused: %v", ok, rs)
		}
	}
	refused(try("2027.2"), v1alpha1.ReasonUpgradePathInvalid, "from 2026.1 to 2027.2 over 2026.2, 2027.1", "2026.1 -> 2026.2 -> 2027.1 -> 2027.2", "previous render is for 2026.1")
	refused(try("2025.2"), v1alpha1.ReasonDowngradeNotSupported, "goes down from 2026.1 to 2025.2")
	if rs := try("2026.2"); rs != nil {
		t.Fatalf("2026.2 after 2026.1 was refused: %v", rs)
	}

	// Under kustomize the input's copies are a base's: no previous render.
	s.set("Glance", "glance", "2026.2", "spec", "openStackRelease")
	if err := s.object("Glance", "glance").SetAnnotation(decode.AnnotationKustomizeID, "x"); err != nil {
		t.Fatal(err)
	}
	if rs := try("2025.1"); rs != nil {
		t.Errorf("under kustomize a release change was judged: %v", rs)
	}
}
