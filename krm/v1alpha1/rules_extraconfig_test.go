package v1alpha1

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

const secretAdvice = ": extraConfig is rendered into a plain ConfigMap; put it in an INI file in a Secret of your own, " +
	"mount that into the glance-api container and add --config-dir for its folder to the container's args"

// TestExtraConfigDeprecatedSpellings: oslo.config still reads an option
// under each of its deprecated spellings (GlanceDeprecatedOptions), so a
// spelling of an option a typed field owns is refused naming the field,
// and a spelling of a secret option is refused as the secret it holds.
// The messages are written out here, not computed, so that a spelling
// dropped from the generated lists, or a message losing the field, fails.
func TestExtraConfigDeprecatedSpellings(t *testing.T) {
	deprecated := func(key, section, option, owner string) string {
		return `option "` + key + `" in section [` + section + `] is a deprecated spelling of ` + option +
			`, which oslo.config still reads; that option is owned by ` + owner
	}
	cases := map[string]struct {
		section, key string
		want         string // "" when the spelling is free
	}{
		"[DEFAULT] sql_connection is the database DSN": {"DEFAULT", "sql_connection",
			deprecated("sql_connection", "DEFAULT", "[database] connection", "spec.database.secretRef")},
		"[DATABASE] sql_connection: oslo.config folds the section": {"DATABASE", "sql_connection",
			deprecated("sql_connection", "database", "[database] connection", "spec.database.secretRef")},
		"[database] sql_connection": {"database", "sql_connection",
			deprecated("sql_connection", "database", "[database] connection", "spec.database.secretRef")},
		"[sql] connection": {"sql", "connection",
			deprecated("connection", "sql", "[database] connection", "spec.database.secretRef")},
		"[SQL] connection": {"SQL", "connection",
			deprecated("connection", "sql", "[database] connection", "spec.database.secretRef")},
		"[keystone_authtoken] auth_uri": {"keystone_authtoken", "auth_uri",
			deprecated("auth_uri", "keystone_authtoken", "[keystone_authtoken] www_authenticate_uri", "spec.keystonePublicEndpoint")},
		"[Keystone_AuthToken] auth_uri": {"Keystone_AuthToken", "auth_uri",
			deprecated("auth_uri", "keystone_authtoken", "[keystone_authtoken] www_authenticate_uri", "spec.keystonePublicEndpoint")},
		"[keystone_authtoken] memcache_servers": {"keystone_authtoken", "memcache_servers",
			deprecated("memcache_servers", "keystone_authtoken", "[keystone_authtoken] memcached_servers", "spec.cache (servers or clusterRef)")},
		"[keystone_authtoken] auth_plugin": {"keystone_authtoken", "auth_plugin",
			deprecated("auth_plugin", "keystone_authtoken", "[keystone_authtoken] auth_type", "spec.serviceUser (password, or v3applicationcredential with spec.serviceUser.applicationCredential)")},
		"[keystone_authtoken] tenant_name": {"keystone_authtoken", "tenant_name",
			deprecated("tenant_name", "keystone_authtoken", "[keystone_authtoken] project_name", "spec.serviceUser.projectName")},
		"[keystone_authtoken] tenant-name: a dashed deprecated name is read as written too": {"keystone_authtoken", "tenant-name",
			deprecated("tenant-name", "keystone_authtoken", "[keystone_authtoken] project_name", "spec.serviceUser.projectName")},
		"[keystone_authtoken] user_name": {"keystone_authtoken", "user_name",
			deprecated("user_name", "keystone_authtoken", "[keystone_authtoken] username", "spec.serviceUser.username")},
		"[keystone_authtoken] user-name": {"keystone_authtoken", "user-name",
			deprecated("user-name", "keystone_authtoken", "[keystone_authtoken] username", "spec.serviceUser.username")},
		"[DEFAULT] notification_transport_url holds the notification bus's password": {"DEFAULT", "notification_transport_url",
			"section [DEFAULT] holds an option Glance marks secret (metadata_encryption_key, notification_transport_url, transport_url)" + secretAdvice},
		"[amqp1] ssl_key_password": {"amqp1", "ssl_key_password",
			"section [amqp1] holds an option Glance marks secret (ssl_key_password)" + secretAdvice},
		"[AMQP1] ssl_key_password": {"AMQP1", "ssl_key_password",
			"section [amqp1] holds an option Glance marks secret (ssl_key_password)" + secretAdvice},
		// Secret in the newer releases only: the lists are their union.
		"[database] asyncio_connection (2025.1 on)": {"database", "asyncio_connection",
			"section [database] holds an option Glance marks secret (asyncio_connection, asyncio_slave_connection, slave_connection)" + secretAdvice},
		"[backend_defaults] s3_store_secret_key (glance_store 5 on)": {"backend_defaults", "s3_store_secret_key",
			"section [backend_defaults] holds an option Glance marks secret (s3_store_access_key, s3_store_secret_key)" + secretAdvice},
		"[keystone_authtoken] memcache_password (2026.2)": {"keystone_authtoken", "memcache_password",
			"section [keystone_authtoken] holds an option Glance marks secret (memcache_password, memcache_secret_key)" + secretAdvice},
		"a deprecated spelling of a free option stays free":                                             {"DEFAULT", "sql_connection_debug", ""},
		"[key_manager] api_class is owned only while signature verification is on (a CEL rule on spec)": {"key_manager", "api_class", ""},
		"lower-case default is another group to oslo.config":                                            {"default", "sql_connection", ""},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var want []verdict
			if tc.want != "" {
				want = []verdict{{"spec.extraConfig[" + tc.section + "][" + tc.key + "]", field.ErrorTypeForbidden, tc.want}}
			}
			got := verdicts(ValidateExtraConfig(map[string]ConfigSection{tc.section: {tc.key: "mysql+pymysql://glance:hunter2@db/glance"}},
				field.NewPath("spec", "extraConfig")))
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestExtraConfigEverySpelling: every deprecated spelling of an owned
// option is refused naming the owning field, and every secret option,
// under its name or a deprecated spelling, that no field owns is refused
// as a secret, in its section spelt as written and upper-cased.
func TestExtraConfigEverySpelling(t *testing.T) {
	p := field.NewPath("spec", "extraConfig")
	check := func(section, key, want string) {
		t.Helper()
		got := verdicts(ValidateExtraConfig(map[string]ConfigSection{section: {key: "x"}}, p))
		if len(got) != 1 || got[0].Detail != want || got[0].Field != "spec.extraConfig["+section+"]["+key+"]" {
			t.Errorf("[%s] %s: got %+v, want one Forbidden %q", section, key, got, want)
		}
	}
	owned := 0
	for spelling, cur := range GlanceDeprecatedOptions {
		owner, ok := GlanceOwnedOptions[cur]
		if !ok {
			continue
		}
		owned++
		want := DeprecatedOwnedConfigMessage(spelling, cur, owner)
		if !strings.Contains(want, "owned by "+owner) {
			t.Errorf("%q does not name the owner %s", want, owner)
		}
		check(spelling.Section, spelling.Key, want)
		if spelling.Section != "DEFAULT" {
			check(strings.ToUpper(spelling.Section), spelling.Key, want)
		}
	}
	if owned < 10 {
		t.Errorf("only %d deprecated spellings of owned options; bookworm's Glance alone has 10", owned)
	}
	for section, keys := range GlanceSecretOptions {
		for _, k := range keys {
			if ownedConfigMessage(ConfigOption{section, k}) != "" {
				continue
			}
			check(section, k, SecretConfigMessage(section))
			if section != "DEFAULT" {
				check(strings.ToUpper(section), k, SecretConfigMessage(section))
			}
		}
	}
}
