package render

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

// glance is a Glance as the API server would admit it, defaults applied.
func glance(release string, edit func(*v1alpha1.GlanceSpec)) *v1alpha1.Glance {
	g := &v1alpha1.Glance{}
	g.Name, g.Namespace = "glance", "openstack"
	g.Spec.OpenStackRelease = release
	g.Spec.Image = v1alpha1.ImageSpec{Repository: "ghcr.io/c5c3/glance", Tag: release}
	g.Spec.Database = v1alpha1.DatabaseSpec{Host: "mariadb", Database: "glance"}
	g.Spec.Database.SecretRef.Name = "db"
	g.Spec.Cache.Servers = []string{"memcached:11211"}
	g.Spec.KeystoneEndpoint = "http://keystone.openstack.svc:5000/v3"
	g.Spec.ServiceUser.SecretRef.Name = "service"
	if edit != nil {
		edit(&g.Spec)
	}
	g.Default()
	return g
}

func store(name string, isDefault bool) *v1alpha1.GlanceBackend {
	b := &v1alpha1.GlanceBackend{}
	b.Name, b.Namespace = name, "openstack"
	b.Spec = v1alpha1.GlanceBackendSpec{GlanceRef: v1alpha1.GlanceRefSpec{Name: "glance"}, Type: "S3", IsDefault: isDefault,
		S3: &v1alpha1.S3BackendSpec{Host: "https://" + name + ".example.com", Bucket: name, CredentialsSecretRef: v1alpha1.SecretNameRefSpec{Name: name}}}
	b.Default()
	return b
}

func TestAPIFiles(t *testing.T) {
	for name, c := range map[string]struct {
		release string
		edit    func(*v1alpha1.GlanceSpec)
		policy  map[string]string
		files   []string
	}{
		"eventlet: the conf and paste files": {release: "2025.2",
			files: []string{v1alpha1.KeyGlanceAPIConf, PasteFile}},
		"uWSGI from 2026.1": {release: "2026.1",
			files: []string{v1alpha1.KeyGlanceAPIConf, PasteFile, UWSGIFile}},
		"policy overrides: policy.yaml": {release: "2025.2", policy: map[string]string{"get_images": "role:reader"},
			files: []string{v1alpha1.KeyGlanceAPIConf, PasteFile, PolicyFile}},
		"JSON logging: logging.conf": {release: "2025.2", edit: func(s *v1alpha1.GlanceSpec) { s.Logging = &v1alpha1.LoggingSpec{Format: "json"} },
			files: []string{v1alpha1.KeyGlanceAPIConf, PasteFile, LoggingFile}},
	} {
		t.Run(name, func(t *testing.T) {
			f, err := API(glance(c.release, c.edit), []*v1alpha1.GlanceBackend{store("fast", true), store("slow", false)}, "fast", c.policy)
			if err != nil {
				t.Fatal(err)
			}
			got := slices.Sorted(func(yield func(string) bool) {
				for k := range f.Config {
					if !yield(k) {
						return
					}
				}
			})
			want := slices.Sorted(slices.Values(c.files))
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("files (-want +got):\n%s", diff)
			}
			for _, s := range []string{"[fast]", "[slow]"} {
				if !strings.Contains(f.BackendsConf, s) {
					t.Errorf("backends.conf has no section %s:\n%s", s, f.BackendsConf)
				}
			}
			if !strings.Contains(f.Config[v1alpha1.KeyGlanceAPIConf], "default_backend = fast") {
				t.Errorf("glance-api.conf does not name the default store:\n%s", f.Config[v1alpha1.KeyGlanceAPIConf])
			}
		})
	}
}

// Options name every option the INI files set, by the variable that would
// override it; no credential is among them (the init container writes
// those, and the wiring names them itself).
func TestAPIOptions(t *testing.T) {
	f, err := API(glance("2025.2", nil), []*v1alpha1.GlanceBackend{store("fast", true)}, "fast", nil)
	if err != nil {
		t.Fatal(err)
	}
	for variable, want := range map[string]string{
		"OS_FAST__S3_STORE_HOST":           "[fast] s3_store_host",
		"OS_GLANCE_STORE__DEFAULT_BACKEND": "[glance_store] default_backend",
	} {
		if got := f.Options[variable]; got != want {
			t.Errorf("Options[%s] = %q, want %q", variable, got, want)
		}
	}
	for variable := range f.Options {
		if strings.Contains(variable, "ACCESS_KEY") || strings.Contains(variable, "SECRET_KEY") || strings.HasSuffix(variable, "__CONNECTION") {
			t.Errorf("a credential is rendered: %s", variable)
		}
	}
}

func TestEgress(t *testing.T) {
	for name, c := range map[string]struct {
		edit    func(*v1alpha1.GlanceSpec)
		ports   []int32
		unknown int
	}{
		"database, cache, Keystone, the stores": {ports: []int32{443, 3306, 5000, 11211}},
		"a database port": {edit: func(s *v1alpha1.GlanceSpec) { s.Database.Port = 13306 },
			ports: []int32{443, 5000, 11211, 13306}},
		"an endpoint through extraConfig": {edit: func(s *v1alpha1.GlanceSpec) {
			s.ExtraConfig = map[string]v1alpha1.ConfigSection{"oslo_messaging_notifications": {"transport_url": "rabbit://rabbit:5671/"}}
		}, ports: []int32{443, 3306, 5000, 5671, 11211}},
	} {
		t.Run(name, func(t *testing.T) {
			f, err := API(glance("2025.2", c.edit), []*v1alpha1.GlanceBackend{store("fast", true)}, "fast", nil)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(c.ports, f.Egress.Ports); diff != "" {
				t.Errorf("ports (-want +got):\n%s", diff)
			}
			if len(f.Egress.Unknown) != c.unknown {
				t.Errorf("unknown contacts %q, want %d", f.Egress.Unknown, c.unknown)
			}
		})
	}
}

// ExampleAPI renders one API of a Glance with one S3 store.
func ExampleAPI() {
	f, err := API(glance("2025.2", nil), []*v1alpha1.GlanceBackend{store("fast", true)}, "fast", nil)
	if err != nil {
		panic(err)
	}
	fmt.Print(f.BackendsConf)
	// Output:
	// # Rendered by glance-krm from the GlanceBackends attached to Glance openstack/glance. Do not edit.
	// # S3 credentials are not here: at pod start the glance-krm-credentials init container writes them from their Secrets to /etc/glance/glance-api.conf.d/.
	//
	// # GlanceBackend openstack/fast
	// [fast]
	// s3_store_host = https://fast.example.com
	// s3_store_bucket = fast
	// s3_store_bucket_url_format = path
	// store_description = S3 bucket fast
}

// LP #2121144 from 2026.1: a store on a non-AWS server gets glance_store's
// checksum options; before, and on AWS, its section has none (the
// environment does it, see wire).
func TestChecksumOptions(t *testing.T) {
	const line = "s3_store_request_checksum_calculation = when_required\ns3_store_response_checksum_validation = when_required\n"
	aws := store("aws", false)
	aws.Spec.S3.Host = "https://s3.eu-central-1.amazonaws.com"
	for name, c := range map[string]struct {
		release string
		b       *v1alpha1.GlanceBackend
		want    bool
	}{
		"2026.1 on a non-AWS server": {"2026.1", store("rgw", true), true},
		"2026.2 on a non-AWS server": {"2026.2", store("rgw", true), true},
		"2025.2 on a non-AWS server": {"2025.2", store("rgw", true), false},
		"2026.1 on AWS":              {"2026.1", aws, false},
	} {
		t.Run(name, func(t *testing.T) {
			f, err := API(glance(c.release, nil), []*v1alpha1.GlanceBackend{c.b}, c.b.Name, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Contains(f.BackendsConf, line); got != c.want {
				t.Errorf("checksum options rendered: %v, want %v\n%s", got, c.want, f.BackendsConf)
			}
		})
	}
}
