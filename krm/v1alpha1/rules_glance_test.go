package v1alpha1

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func validGlance() *Glance {
	g := &Glance{Spec: GlanceSpec{
		OpenStackRelease: "2025.2",
		Image:            ImageSpec{Repository: "ghcr.io/c5c3/glance", Tag: "2025.2"},
		KeystoneEndpoint: "http://keystone:5000/v3",
		ServiceUser:      ServiceUserSpec{SecretRef: PasswordSecretRefSpec{Name: "glance-service-user"}},
		Database:         DatabaseSpec{Host: "mariadb", Database: "glance", SecretRef: SecretRefSpec{Name: "glance-db"}}, Cache: CacheSpec{Servers: []string{"memcached:11211"}},
	}}
	g.Name, g.Namespace = "glance", "openstack"
	g.Default()
	return g
}

func TestValidateGlance(t *testing.T) {
	invalid := func(f, detail string) verdict { return verdict{f, field.ErrorTypeInvalid, detail} }
	cases := map[string]struct {
		mutate func(*Glance)
		want   []verdict
	}{
		"valid": {mutate: func(*Glance) {}},
		"openStackRelease pattern": {
			mutate: func(g *Glance) { g.Spec.OpenStackRelease = "2025.3" },
			want:   []verdict{invalid("spec.openStackRelease", `should match '^\d{4}\.[12]$'`)},
		},
		"openStackRelease missing": {
			mutate: func(g *Glance) { g.Spec.OpenStackRelease = "" },
			want:   []verdict{invalid("spec.openStackRelease", `should match '^\d{4}\.[12]$'`)},
		},
		"image tag and digest": {
			mutate: func(g *Glance) { g.Spec.Image.Digest = "sha256:" + strings.Repeat("a", 64) },
			want:   []verdict{invalid("spec.image", MsgImageTagXorDigest)},
		},
		"image neither tag nor digest": {
			mutate: func(g *Glance) { g.Spec.Image.Tag = "" },
			want:   []verdict{invalid("spec.image", MsgImageTagXorDigest)},
		},
		"image digest only is fine": {
			mutate: func(g *Glance) { g.Spec.Image.Tag, g.Spec.Image.Digest = "", "sha256:"+strings.Repeat("0", 64) },
		},
		"image digest pattern": {
			mutate: func(g *Glance) { g.Spec.Image.Tag, g.Spec.Image.Digest = "", "sha256:xyz" },
			want:   []verdict{invalid("spec.image.digest", "should match '^sha256:[a-f0-9]{64}$'")},
		},
		"image repository": {
			mutate: func(g *Glance) { g.Spec.Image.Repository = "" },
			want:   []verdict{invalid("spec.image.repository", "should be at least 1 chars long")},
		},
		"keystoneEndpoint pattern": {
			mutate: func(g *Glance) { g.Spec.KeystoneEndpoint = "keystone:5000" },
			want:   []verdict{invalid("spec.keystoneEndpoint", "should match '^https?://'")},
		},
		"keystoneEndpoint with a newline after its scheme": {
			mutate: func(g *Glance) { g.Spec.KeystoneEndpoint = "http://keystone\n[database]" },
			want:   []verdict{invalid("spec.keystoneEndpoint", MsgINIInjection)},
		},
		"service user name with a carriage return": {
			mutate: func(g *Glance) { g.Spec.ServiceUser.ProjectName = "service\r" },
			want:   []verdict{invalid("spec.serviceUser.projectName", MsgINIInjection)},
		},
		"keystonePublicEndpoint pattern": {
			mutate: func(g *Glance) { g.Spec.KeystonePublicEndpoint = "ftp://x" },
			want:   []verdict{invalid("spec.keystonePublicEndpoint", "should match '^https?://'")},
		},
		"serviceUser secret": {
			mutate: func(g *Glance) { g.Spec.ServiceUser.SecretRef.Name = "" },
			want:   []verdict{invalid("spec.serviceUser.secretRef.name", "should be at least 1 chars long")},
		},
		"database secret": {
			mutate: func(g *Glance) { g.Spec.Database.SecretRef.Name = "" },
			want:   []verdict{invalid("spec.database.secretRef.name", "should be at least 1 chars long")},
		},
		"cache servers": {
			mutate: func(g *Glance) {
				g.Spec.Cache = CacheSpec{Servers: []string{"mc:11211", "inet6:[::1]:11211", "mc", "mc:11211,x:1"}}
			},
			want: []verdict{
				invalid("spec.cache.servers[2]", "should match '"+memcachedServer.String()+"'"),
				invalid("spec.cache.servers[3]", "should match '"+memcachedServer.String()+"'"),
			},
		},
		"targetClusterRef name": {
			mutate: func(g *Glance) { g.Spec.TargetClusterRef = &ClusterRefSpec{} },
			want:   []verdict{invalid("spec.targetClusterRef.name", "should be at least 1 chars long")},
		},
		"name longer than a label value": {
			mutate: func(g *Glance) { g.Name = strings.Repeat("g", 64) },
			want:   []verdict{invalid("metadata.name", MsgGlanceNameTooLong)},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := validGlance()
			tc.mutate(g)
			if diff := cmp.Diff(tc.want, verdicts(ValidateGlance(g))); diff != "" {
				t.Errorf("ValidateGlance() (-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidateExtraConfig(t *testing.T) {
	p := "spec.extraConfig"
	owned := func(f, section, key, owner string) verdict {
		return verdict{f, field.ErrorTypeForbidden, OwnedConfigMessage(ConfigOption{section, key}, owner)}
	}
	cases := map[string]struct {
		cfg  map[string]ConfigSection
		want []verdict
	}{
		"free options are fine": {cfg: map[string]ConfigSection{
			"DEFAULT":      {"debug": "true", "workers": "4"},
			"paste_deploy": {"flavor": "keystone+cachemanagement"},
			"oslo_policy":  {"enforce_new_defaults": "true"},
		}},
		"section with a newline": {
			cfg:  map[string]ConfigSection{"a\nb": {"k": "v"}},
			want: []verdict{{p + `["a\nb"]`, field.ErrorTypeInvalid, "section " + MsgINIInjection}},
		},
		"section with a bracket": {
			cfg:  map[string]ConfigSection{"a]b": {"k": "v"}},
			want: []verdict{{p + `["a]b"]`, field.ErrorTypeInvalid, MsgSectionPattern}},
		},
		"key with a carriage return": {
			cfg:  map[string]ConfigSection{"DEFAULT": {"a\rb": "v"}},
			want: []verdict{{p + `[DEFAULT]["a\rb"]`, field.ErrorTypeInvalid, "option name " + MsgINIInjection}},
		},
		"key with an equals sign": {
			cfg:  map[string]ConfigSection{"DEFAULT": {"a=b": "v"}},
			want: []verdict{{p + `[DEFAULT]["a=b"]`, field.ErrorTypeInvalid, MsgConfigKeyPattern}},
		},
		"value with a newline": {
			cfg:  map[string]ConfigSection{"DEFAULT": {"debug": "true\n[database]"}},
			want: []verdict{{p + `[DEFAULT][debug]`, field.ErrorTypeInvalid, "value " + MsgINIInjection}},
		},
		"value too long": {
			cfg:  map[string]ConfigSection{"DEFAULT": {"debug": OptionValue(strings.Repeat("x", 1025))}},
			want: []verdict{{p + `[DEFAULT][debug]`, field.ErrorTypeTooLong, "may not be more than 1024 bytes"}},
		},
		"owned: password": {
			cfg:  map[string]ConfigSection{"keystone_authtoken": {"password": "x"}},
			want: []verdict{owned(p+"[keystone_authtoken][password]", "keystone_authtoken", "password", "spec.serviceUser.secretRef")},
		},
		"owned, in a section spelt the way oslo.config still finds it": {
			cfg:  map[string]ConfigSection{"Keystone_AuthToken": {"auth_url": "x"}},
			want: []verdict{owned(p+"[Keystone_AuthToken][auth_url]", "Keystone_AuthToken", "auth_url", "spec.keystoneEndpoint")},
		},
		"a dashed option name is not the option: oslo.config reads files by dest": {
			cfg: map[string]ConfigSection{"keystone_authtoken": {"auth-url": "x"}},
		},
		"owned: database connection": {
			cfg:  map[string]ConfigSection{"database": {"connection": "sqlite://"}},
			want: []verdict{owned(p+"[database][connection]", "database", "connection", "spec.database.secretRef")},
		},
		"owned: default store": {
			cfg:  map[string]ConfigSection{"glance_store": {"default_backend": "x"}},
			want: []verdict{owned(p+"[glance_store][default_backend]", "glance_store", "default_backend", "the GlanceBackend marked spec.isDefault")},
		},
		"owned: enabled_backends": {
			cfg:  map[string]ConfigSection{"DEFAULT": {"enabled_backends": "x:s3"}},
			want: []verdict{owned(p+"[DEFAULT][enabled_backends]", "DEFAULT", "enabled_backends", "the GlanceBackends attached to this Glance (their spec.glanceRef)")},
		},
		"lower-case default is another group to oslo.config": {
			cfg: map[string]ConfigSection{"default": {"enabled_backends": "x:s3"}},
		},
	}
	for o, owner := range GlanceOwnedOptions {
		cases["owned "+o.Section+"."+o.Key] = struct {
			cfg  map[string]ConfigSection
			want []verdict
		}{
			cfg:  map[string]ConfigSection{o.Section: {o.Key: "x"}},
			want: []verdict{owned(p+"["+o.Section+"]["+o.Key+"]", o.Section, o.Key, owner)},
		}
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, verdicts(ValidateExtraConfig(tc.cfg, field.NewPath("spec", "extraConfig")))); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidateExtraConfigStores(t *testing.T) {
	cfg := map[string]ConfigSection{"Primary": {"k": "v"}, "unrelated": {"k": "v"}}
	got := verdicts(ValidateExtraConfigStores(cfg, []string{"primary", "secondary"}, field.NewPath("spec", "extraConfig")))
	want := []verdict{{"spec.extraConfig[Primary]", field.ErrorTypeForbidden,
		`section [Primary] is owned by GlanceBackend "primary"; set store options in its spec.extraOptions`}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestDefaultBackend(t *testing.T) {
	backend := func(name string, isDefault bool) *GlanceBackend {
		b := validBackend()
		b.Name, b.Spec.IsDefault = name, isDefault
		return b
	}
	cases := map[string]struct {
		backends []*GlanceBackend
		want     string
		wantErr  string
	}{
		"exactly one": {backends: []*GlanceBackend{backend("a", false), backend("b", true)}, want: "b"},
		"none attached": {
			wantErr: `NoDefaultBackend: no GlanceBackend is attached to Glance "openstack/glance"; exactly one default store is allowed`,
		},
		"zero defaults": {
			backends: []*GlanceBackend{backend("a", false), backend("b", false)},
			wantErr:  `NoDefaultBackend: no GlanceBackend attached to Glance "openstack/glance" is marked isDefault; exactly one default store is allowed`,
		},
		"two defaults, each named": {
			backends: []*GlanceBackend{backend("b", true), backend("c", false), backend("a", true)},
			wantErr:  `NoDefaultBackend: GlanceBackends "a", "b" attached to the same Glance "openstack/glance" are all marked isDefault; exactly one default store is allowed`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := DefaultBackend("openstack/glance", tc.backends)
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if got != tc.want || gotErr != tc.wantErr {
				t.Errorf("DefaultBackend() = %q, %q; want %q, %q", got, gotErr, tc.want, tc.wantErr)
			}
		})
	}
}

func TestStoreEnvNames(t *testing.T) {
	for store, want := range map[string][2]string{
		"garage-a":    {"OS_GARAGE-A__S3_STORE_ACCESS_KEY", "OS_GARAGE-A__S3_STORE_SECRET_KEY"},
		"vgw.archive": {"OS_VGW.ARCHIVE__S3_STORE_ACCESS_KEY", "OS_VGW.ARCHIVE__S3_STORE_SECRET_KEY"},
	} {
		a, s := StoreEnvNames(store)
		if [2]string{a, s} != want {
			t.Errorf("StoreEnvNames(%q) = %q, %q; want %q", store, a, s, want)
		}
		if !IsStoreCredentialEnv(a) || !IsStoreCredentialEnv(s) {
			t.Errorf("IsStoreCredentialEnv does not recognise %q / %q", a, s)
		}
	}
	if IsStoreCredentialEnv("OS_DEFAULT__DEBUG") {
		t.Error("IsStoreCredentialEnv claims an unrelated variable")
	}
}
