package glancekrm

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/yaml"

	"github.com/c5c3/glance-krm/fn/oslo"
	"github.com/c5c3/glance-krm/internal/testenv"
	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

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
	out, failed := runFn(t, resourceList(t, docs.Bytes()))
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
