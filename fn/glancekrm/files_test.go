package glancekrm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kptdev/krm-functions-sdk/go/fn"
	"gopkg.in/ini.v1"
	networkingv1 "k8s.io/api/networking/v1"
	"sigs.k8s.io/yaml"

	"github.com/c5c3/glance-krm/fn/glancekrm/render"
	"github.com/c5c3/glance-krm/fn/oslo"
	"github.com/c5c3/glance-krm/internal/fntest"
	"github.com/c5c3/glance-krm/internal/testenv"
	"github.com/c5c3/glance-krm/krm/catalogs"
	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

// egressGlance reaches everything on a port of its own: Keystone, the
// database, two memcached servers, barbican (named in extraConfig) and
// two web-download ports.
const egressGlance = `apiVersion: glance.openstack.c5c3.io/v1alpha1
kind: Glance
metadata: {name: glance, namespace: ns}
spec:
  openStackRelease: "2025.2"
  image: {repository: ghcr.io/c5c3/glance, tag: "2025.2"}
  database: {host: mariadb, port: 3307, database: glance, secretRef: {name: db}}
  cache: {servers: ["memcached-a:11212", "memcached-b:11213"]}
  keystoneEndpoint: http://keystone:35357/v3
  serviceUser: {secretRef: {name: svc}}
  imageSignatureVerification: {enabled: true}
  importFiltering: {allowedPorts: [8443, 443]}
  networkPolicy: {ingress: [{namespaceSelector: {}}]}
`

const namedBarbican = `  extraConfig:
    barbican: {barbican_endpoint: "https://barbican.example:9311"}
`

// TestNetworkPolicyAdmitsTheRenderedEndpoints reads every endpoint out of
// the rendered files with a reader of its own (gopkg.in/ini.v1 and a URL
// pattern: every value holding scheme://host, every host:port of a
// *_servers option), the database port from the spec (the connection is
// composed in the pod) and web-download's allowed ports, and checks that
// the generated NetworkPolicy of the pods reading those files admits each.
func TestNetworkPolicyAdmitsTheRenderedEndpoints(t *testing.T) {
	for name, input := range map[string]string{
		"every endpoint on its own port": fntest.Docs(egressGlance+namedBarbican, fntest.Backend("a", "glance", true),
			strings.Replace(fntest.Backend("b", "glance", false), "https://s3.example", "http://s3-b.example:7480", 1)),
		"barbican through the catalog warns": fntest.Docs(egressGlance, fntest.Backend("a", "glance", true)),
		"an empty allowed_ports warns":       fntest.Docs(strings.Replace(egressGlance+namedBarbican, "allowedPorts: [8443, 443]", "allowedPorts: []", 1), fntest.Backend("a", "glance", true)),
		"additionalEgress takes the warning": fntest.Docs(strings.Replace(egressGlance, "networkPolicy: {ingress: [{namespaceSelector: {}}]}",
			"networkPolicy: {ingress: [{namespaceSelector: {}}], additionalEgress: [{ports: [{port: 9311}]}]}", 1), fntest.Backend("a", "glance", true)),
	} {
		t.Run(name, func(t *testing.T) {
			rl, failed := runFnOn(t, input)
			if failed {
				t.Fatalf("failed: %v", rl.Results)
			}
			var files []string
			var policy networkingv1.NetworkPolicy
			for _, o := range rl.Items {
				switch {
				case o.GetKind() == "ConfigMap" && o.GetLabel(v1alpha1.LabelComponent) == v1alpha1.ComponentConfig:
					s, _, _ := o.NestedString("data", v1alpha1.KeyGlanceAPIConf)
					files = append(files, s)
				case o.GetKind() == "Secret" && o.GetLabel(v1alpha1.LabelComponent) == v1alpha1.ComponentBackends:
					s, _, _ := o.NestedString("stringData", v1alpha1.KeyBackendsConf)
					files = append(files, s)
				case o.GetKind() == "NetworkPolicy" && o.GetName() == "glance":
					if err := yaml.Unmarshal([]byte(o.String()), &policy); err != nil {
						t.Fatal(err)
					}
				}
			}
			if len(files) != 2 || policy.Name == "" {
				t.Fatalf("the render holds %d rendered files and policy %q", len(files), policy.Name)
			}
			admitted := map[int]bool{}
			for _, r := range policy.Spec.Egress {
				for _, p := range r.Ports {
					admitted[p.Port.IntValue()] = true
				}
			}
			want := endpointsOf(t, files)
			want = append(want, 3307) // spec.database.port
			for _, p := range want {
				if !admitted[p] {
					t.Errorf("port %d, which the rendered files contact, is not admitted by the NetworkPolicy (admitted %v)", p, admitted)
				}
			}
			if len(want) < 5 {
				t.Errorf("only %v read out of the rendered files", want)
			}
			warned := slices.ContainsFunc(rl.Results, func(r *fn.Result) bool {
				return r.Severity == fn.Warning && strings.Contains(r.Message, v1alpha1.ReasonEgressNotRendered) &&
					strings.Contains(r.Message, "spec.networkPolicy.additionalEgress")
			})
			if wantWarn := strings.Contains(name, "warns"); warned != wantWarn {
				t.Errorf("warning %s: %v, want %v (%v)", v1alpha1.ReasonEgressNotRendered, warned, wantWarn, rl.Results)
			}
		})
	}
}

var urlPattern = regexp.MustCompile(`[a-z][a-z0-9+.-]*://[^\s,/\]]+`)

// endpointsOf is every port the files name, read independently of the
// function's own reader.
func endpointsOf(t *testing.T, files []string) []int {
	t.Helper()
	defaults := map[string]int{"http": 80, "https": 443, "rabbit": 5672}
	var out []int
	for _, text := range files {
		f, err := ini.LoadSources(ini.LoadOptions{IgnoreInlineComment: true}, []byte(text))
		if err != nil {
			t.Fatal(err)
		}
		for _, sec := range f.Sections() {
			for _, k := range sec.Keys() {
				for _, m := range urlPattern.FindAllString(k.Value(), -1) {
					u, err := url.Parse(m)
					if err != nil {
						t.Fatalf("[%s] %s: %v", sec.Name(), k.Name(), err)
					}
					p, err := strconv.Atoi(u.Port())
					if err != nil {
						p = defaults[u.Scheme]
					}
					out = append(out, p)
				}
				if strings.HasSuffix(k.Name(), "_servers") {
					for _, hp := range strings.Split(k.Value(), ",") {
						_, ps, err := net.SplitHostPort(strings.TrimSpace(hp))
						if err != nil {
							t.Fatalf("[%s] %s = %q: %v", sec.Name(), k.Name(), k.Value(), err)
						}
						p, _ := strconv.Atoi(ps)
						out = append(out, p)
					}
				}
				if k.Name() == "allowed_ports" && strings.Contains(f.Section("DEFAULT").Key("enabled_import_methods").String(), "web-download") {
					for _, ps := range strings.FieldsFunc(k.Value(), func(r rune) bool { return r == '[' || r == ']' || r == ',' }) {
						p, err := strconv.Atoi(strings.TrimSpace(ps))
						if err != nil {
							t.Fatal(fmt.Errorf("allowed_ports %q: %w", k.Value(), err))
						}
						out = append(out, p)
					}
				}
			}
		}
	}
	return out
}

// TestJSONLoggingKeepsLevels renders a Glance with format json, debug and
// perLoggerLevels and sets logging up with each Debian release's oslo.log,
// as glance-api does (oslo.log's setup on the rendered glance-api.conf,
// which names logging.conf in log_config_append): the root logger is at
// DEBUG and every named logger at its level. oslo.log applies neither
// [DEFAULT] debug nor default_log_levels once log_config_append is set,
// so a logging.conf without them loses both.
func TestJSONLoggingKeepsLevels(t *testing.T) {
	const script = `
import json, logging, sys
from oslo_config import cfg
from oslo_log import log
conf = cfg.ConfigOpts()
log.register_options(conf)
conf(["--config-file", sys.argv[1]], project="glance")
log.setup(conf, "glance")
names = sys.argv[2:]
json.dump({n or "root": logging.getLevelName(logging.getLogger(n).level) for n in [""] + names}, sys.stdout)
`
	for _, py := range testenv.Pythons(t) {
		t.Run(py.Suite, func(t *testing.T) {
			rl, failed := runFnOn(t, fntest.Docs(glanceWith(`  logging:
    format: json
    level: WARNING
    debug: true
    perLoggerLevels: {glance.api: ERROR, "sqlalchemy.engine": INFO, "odd%name": CRITICAL}
`), fntest.Backend("a", "glance", true)))
			if failed {
				t.Fatalf("failed: %v", rl.Results)
			}
			dir := filepath.Join(os.TempDir(), "glance-krm-logging-"+py.Suite)
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = os.RemoveAll(dir) })
			for _, o := range rl.Items {
				if o.GetLabel(v1alpha1.LabelComponent) != v1alpha1.ComponentConfig {
					continue
				}
				conf, _, _ := o.NestedString("data", v1alpha1.KeyGlanceAPIConf)
				logging, _, _ := o.NestedString("data", render.LoggingFile)
				conf = strings.ReplaceAll(conf, v1alpha1.MountConfigDir+render.LoggingFile, filepath.Join(dir, render.LoggingFile))
				for name, text := range map[string]string{"glance-api.conf": conf, render.LoggingFile: logging} {
					if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
			out, err := py.Command(script, filepath.Join(dir, "glance-api.conf"), "glance.api", "sqlalchemy.engine", "odd%name").Output()
			if err != nil {
				t.Fatalf("oslo.log setup: %v\n%s", err, stderrOf(err))
			}
			var got map[string]string
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatal(err)
			}
			want := map[string]string{"root": "DEBUG", "glance.api": "ERROR", "sqlalchemy.engine": "INFO", "odd%name": "CRITICAL"}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("logger levels after oslo.log's setup (-want +got):\n%s", diff)
			}
		})
	}
}

func stderrOf(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return string(ee.Stderr)
	}
	return ""
}

// TestOsloConfigRoundTrip renders every adversarial value, through the
// whole function, into the typed fields, extraOptions and extraConfig, and
// reads the rendered files back with Debian's python3-oslo.config exactly
// as glance-api would (--config-file and --config-dir). Every value must
// come back identical.
func TestOsloConfigRoundTrip(t *testing.T) {
	testenv.OsloConfig(t)

	want := map[string]map[string]string{"DEFAULT": {}, "image_format": {}, "primary": {}, "secondary": {}}
	// extraOptions holds at most 32 entries: the values are spread over
	// two stores.
	extraOptions := map[string]map[string]v1alpha1.OptionValue{"primary": {}, "secondary": {}}
	extraConfig := map[string]v1alpha1.ConfigSection{"DEFAULT": {}, "image_format": {}}
	for i, v := range oslo.Adversarial {
		k := fmt.Sprintf("v%02d", i)
		store := []string{"primary", "secondary"}[i%2]
		extraOptions[store][k] = v1alpha1.OptionValue(v)
		extraConfig["image_format"][k] = v1alpha1.OptionValue(v)
		extraConfig["DEFAULT"]["x_"+k] = v1alpha1.OptionValue(v)
		want[store][k] = v
		want["image_format"][k] = v
		want["DEFAULT"]["x_"+k] = v
	}
	// The typed fields go through the same writer: a bucket and a region
	// may be any string, a host any string after its scheme without
	// whitespace, userinfo, query or fragment.
	want["primary"]["s3_store_host"] = `http://s3.example/$bucket'"%`
	want["primary"]["s3_store_bucket"] = ` "b$" `
	want["primary"]["s3_store_region_name"] = " eu-west-1 "
	want["primary"]["s3_store_bucket_url_format"] = "path"
	want["primary"]["store_description"] = "S3 bucket " + want["primary"]["s3_store_bucket"]
	want["secondary"]["s3_store_host"] = "https://s3.example"
	want["secondary"]["s3_store_bucket"] = "b"
	want["secondary"]["s3_store_bucket_url_format"] = "path"
	want["secondary"]["store_description"] = "S3 bucket b"
	want["DEFAULT"]["enabled_backends"] = "primary:s3,secondary:s3"
	want["glance_store"] = map[string]string{"default_backend": "primary"}
	want["keystone_authtoken"] = map[string]string{
		"auth_url":             "https://keystone/$v3",
		"www_authenticate_uri": "https://keystone/$v3",
		"username":             "$user ",
		"project_name":         `"service"`,
		"user_domain_name":     "Default",
		"project_domain_name":  "Default",
		"region_name":          "'RegionOne'",
		"auth_type":            "password",
	}

	glance := map[string]any{
		"apiVersion": v1alpha1.APIVersion, "kind": "Glance",
		"metadata": map[string]any{"name": "glance", "namespace": "openstack"},
		"spec": map[string]any{
			// A release without an option catalog: the option names here
			// are made up to carry values (the release rules warn only).
			"openStackRelease": "2024.2",
			"image":            map[string]any{"repository": "glance", "tag": "1"},
			"keystoneEndpoint": want["keystone_authtoken"]["auth_url"],
			"region":           want["keystone_authtoken"]["region_name"],
			"serviceUser": map[string]any{
				"username":    want["keystone_authtoken"]["username"],
				"projectName": want["keystone_authtoken"]["project_name"],
				"secretRef":   map[string]any{"name": "pw"},
			},
			"database":    map[string]any{"host": "mariadb", "database": "glance", "secretRef": map[string]any{"name": "db"}},
			"cache":       map[string]any{"servers": []any{"memcached:11211"}},
			"extraConfig": extraConfig,
		},
	}
	backend := func(name string, isDefault bool) map[string]any {
		return map[string]any{
			"apiVersion": v1alpha1.APIVersion, "kind": "GlanceBackend",
			"metadata": map[string]any{"name": name, "namespace": "openstack"},
			"spec": map[string]any{
				"glanceRef": map[string]any{"name": "glance"}, "type": "S3", "isDefault": isDefault,
				"s3": map[string]any{
					"host":                 want[name]["s3_store_host"],
					"bucket":               want[name]["s3_store_bucket"],
					"region":               want[name]["s3_store_region_name"],
					"credentialsSecretRef": map[string]any{"name": "creds"},
				},
				"extraOptions": extraOptions[name],
			},
		}
	}
	var docs bytes.Buffer
	for _, o := range []any{glance, backend("primary", true), backend("secondary", false)} {
		b, err := yaml.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		docs.WriteString("---\n")
		docs.Write(b)
	}
	out, failed := runFn(t, fntest.ResourceList(t, docs.Bytes()))
	rl, err := fn.ParseResourceList(out)
	if err != nil {
		t.Fatal(err)
	}
	if failed {
		t.Fatalf("the function refused the values:\n%s", rl.Results)
	}

	// Lay the files out as the Deployment mounts them.
	dir := t.TempDir()
	configDir, backendsDir := filepath.Join(dir, "glance.conf.d"), filepath.Join(dir, "backends.conf.d")
	for _, obj := range rl.Items {
		var key, target, content string
		switch obj.GetLabel(v1alpha1.LabelComponent) {
		case v1alpha1.ComponentConfig:
			key, target = v1alpha1.KeyGlanceAPIConf, configDir
			content, _, _ = obj.NestedString("data", key)
		case v1alpha1.ComponentBackends:
			key, target = v1alpha1.KeyBackendsConf, backendsDir
			content, _, _ = obj.NestedString("stringData", key)
		default:
			continue
		}
		if err := os.MkdirAll(target, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(target, key), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	testenv.OsloReadBack(t, []string{configDir, backendsDir}, want)
	if t.Failed() {
		t.Logf("rendered files are in %s", dir)
	}
}

// TestDeprecatedSpellingsRefused: oslo.config still reads an option under
// its deprecated spellings, so on a release without an option catalog
// (2024.2, where no release rule refuses an unknown name) each is refused
// through the whole function, as the option it sets: a spelling of an
// option a typed field owns names the field, a spelling of a secret option
// names the secret rule. Nothing renders, so the password in the value
// reaches no ConfigMap, and no result repeats it. So is an option secret
// only in a newer release, on that release (its catalog knows the name,
// so no release rule refuses it): the secret list is every release's.
func TestDeprecatedSpellingsRefused(t *testing.T) {
	const release = "2024.2"
	if catalogs.For(release) != nil {
		t.Fatalf("%s has an option catalog now: pick a release without one", release)
	}
	const password = "hunter2"
	owned := func(key, section, option, owner string) string {
		return fmt.Sprintf("option %q in section [%s] is a deprecated spelling of %s, which oslo.config still reads; that option is owned by %s",
			key, section, option, owner)
	}
	secret := func(section, opts string) string {
		return fmt.Sprintf("section [%s] holds an option Glance marks secret (%s): extraConfig is rendered into a plain ConfigMap", section, opts)
	}
	signature := "options [key_manager] api_class and [key_manager] auth_url are deprecated spellings of [key_manager] backend and [barbican] auth_endpoint, " +
		"which oslo.config still reads; those options are owned by spec.imageSignatureVerification while it is enabled"
	for _, c := range []struct{ section, key, want, spec, release string }{
		{"DEFAULT", "sql_connection", owned("sql_connection", "DEFAULT", "[database] connection", "spec.database.secretRef"), "", ""},
		{"DATABASE", "sql_connection", owned("sql_connection", "database", "[database] connection", "spec.database.secretRef"), "", ""},
		{"sql", "connection", owned("connection", "sql", "[database] connection", "spec.database.secretRef"), "", ""},
		{"keystone_authtoken", "auth_uri", owned("auth_uri", "keystone_authtoken", "[keystone_authtoken] www_authenticate_uri", "spec.keystonePublicEndpoint"), "", ""},
		{"keystone_authtoken", "memcache_servers", owned("memcache_servers", "keystone_authtoken", "[keystone_authtoken] memcached_servers", "spec.cache (servers or clusterRef)"), "", ""},
		{"keystone_authtoken", "auth_plugin", owned("auth_plugin", "keystone_authtoken", "[keystone_authtoken] auth_type", "spec.serviceUser (password, or v3applicationcredential with spec.serviceUser.applicationCredential)"), "", ""},
		{"keystone_authtoken", "tenant-name", owned("tenant-name", "keystone_authtoken", "[keystone_authtoken] project_name", "spec.serviceUser.projectName"), "", ""},
		{"DEFAULT", "notification_transport_url", secret("DEFAULT", "metadata_encryption_key, notification_transport_url, transport_url"), "", ""},
		{"amqp1", "ssl_key_password", secret("amqp1", "ssl_key_password"), "", ""},
		{"database", "asyncio_connection", secret("database", "asyncio_connection, asyncio_slave_connection, slave_connection"), "", ""},
		// While signature verification is on, [key_manager] backend and
		// [barbican] auth_endpoint are its own (a CEL rule on spec).
		{"key_manager", "api_class", signature, "  imageSignatureVerification: {enabled: true}\n", ""},
		{"key_manager", "auth_url", signature, "  imageSignatureVerification: {enabled: true}\n", ""},
		{"database", "asyncio_connection", secret("database", "asyncio_connection, asyncio_slave_connection, slave_connection"), "", "2025.2"},
		{"profiler", "hmac_keys", secret("profiler", "hmac_keys"), "", "2026.1"},
		{"keystone_authtoken", "memcache_password", secret("keystone_authtoken", "memcache_password, memcache_secret_key"), "", "2026.2"},
	} {
		on := release
		if c.release != "" {
			on = c.release
			if catalogs.For(on) == nil {
				t.Fatalf("no option catalog for %s", on)
			}
		}
		t.Run(on+"/"+c.section+"/"+c.key, func(t *testing.T) {
			glance := strings.ReplaceAll(fntest.Glance, `"2025.2"`, `"`+on+`"`) + c.spec +
				fmt.Sprintf("  extraConfig: {%s: {%s: 'mysql+pymysql://glance:%s@db/glance'}}\n", c.section, c.key, password)
			out, failed := runFn(t, fntest.ResourceList(t, []byte(fntest.Docs(glance, fntest.Backend("primary", "glance", true)))))
			rl, err := fn.ParseResourceList(out)
			if err != nil {
				t.Fatal(err)
			}
			field := fmt.Sprintf("spec.extraConfig[%s][%s]", c.section, c.key)
			if c.spec != "" {
				field = "spec" // a rule on spec names spec
			}
			found := false
			for _, r := range rl.Results {
				found = found || (r.Severity == fn.Error && r.Field != nil && r.Field.Path == field && strings.Contains(r.Message, c.want))
				if strings.Contains(r.Message, password) {
					t.Errorf("a result repeats the password: %s", r.Message)
				}
			}
			if !failed || !found {
				t.Errorf("[%s] %s not refused at %s with %q (failed %v):\n%s", c.section, c.key, field, c.want, failed, fntest.ResultLines(rl.Results))
			}
			for _, o := range rl.Items {
				if o.GetKind() != "Glance" && strings.Contains(o.String(), password) {
					t.Errorf("%s %s holds the password:\n%s", o.GetKind(), o.GetName(), o.String())
				}
			}
		})
	}
}
