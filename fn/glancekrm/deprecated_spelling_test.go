package glancekrm

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kptdev/krm-functions-sdk/go/fn"

	"github.com/c5c3/glance-krm/krm/catalogs"
)

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
			glance := strings.ReplaceAll(testGlance, `"2025.2"`, `"`+on+`"`) + c.spec +
				fmt.Sprintf("  extraConfig: {%s: {%s: 'mysql+pymysql://glance:%s@db/glance'}}\n", c.section, c.key, password)
			out, failed := runFn(t, resourceList(t, []byte(docs(glance, testBackend("primary", "glance", true)))))
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
				t.Errorf("[%s] %s not refused at %s with %q (failed %v):\n%s", c.section, c.key, field, c.want, failed, resultLines(rl.Results))
			}
			for _, o := range rl.Items {
				if o.GetKind() != "Glance" && strings.Contains(o.String(), password) {
					t.Errorf("%s %s holds the password:\n%s", o.GetKind(), o.GetName(), o.String())
				}
			}
		})
	}
}
