package v1alpha1

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func s3Backend(host string, extra map[string]OptionValue) *GlanceBackend {
	return &GlanceBackend{Spec: GlanceBackendSpec{S3: &S3BackendSpec{Host: host, Bucket: "b"}, ExtraOptions: extra}}
}

func TestIsAWSHost(t *testing.T) {
	for host, want := range map[string]bool{
		"https://s3.amazonaws.com":               true,
		"https://s3.eu-central-1.amazonaws.com":  true,
		"https://s3.cn-north-1.amazonaws.com.cn": true,
		"https://S3.US-EAST-1.AMAZONAWS.COM:443": true,
		"http://127.0.0.1:7070":                  false,
		"https://rgw.example.com":                false,
		"https://amazonaws.com.evil.example":     false,
		"https://notamazonaws.com":               false,
		"not a url":                              false,
	} {
		if got := IsAWSHost(host); got != want {
			t.Errorf("IsAWSHost(%q) = %v, want %v", host, got, want)
		}
	}
}

// LP #2121144: the checksum headers boto3 >= 1.36 sends, turned off by
// botocore's environment on 2025.1 and 2025.2 and by glance_store's
// options from 2026.1, only for a store on a non-AWS server.
func TestChecksumWorkaround(t *testing.T) {
	env := [][2]string{{EnvRequestChecksum, ChecksumWhenRequired}, {EnvResponseChecksum, ChecksumWhenRequired}}
	opts := [][2]string{{OptionRequestChecksum, ChecksumWhenRequired}, {OptionResponseChecksum, ChecksumWhenRequired}}
	rgw, aws := s3Backend("https://rgw.example.com", nil), s3Backend("https://s3.amazonaws.com", nil)
	own := s3Backend("https://rgw.example.com", map[string]OptionValue{OptionIntegrityProtection: "true"})
	for name, c := range map[string]struct {
		release  string
		backends []*GlanceBackend
		env      [][2]string
		options  [][2]string // of the first backend
	}{
		"2022.2: its boto3 sends none":             {"2022.2", []*GlanceBackend{rgw}, nil, nil},
		"2024.2: before trixie's boto3":            {"2024.2", []*GlanceBackend{rgw}, nil, nil},
		"2025.1 on RGW: the environment":           {"2025.1", []*GlanceBackend{rgw}, env, nil},
		"2025.2 on RGW: the environment":           {"2025.2", []*GlanceBackend{rgw}, env, nil},
		"2025.2 on AWS alone: nothing":             {"2025.2", []*GlanceBackend{aws}, nil, nil},
		"2025.2 on AWS and RGW: the environment":   {"2025.2", []*GlanceBackend{aws, rgw}, env, nil},
		"2026.1 on RGW: the options":               {"2026.1", []*GlanceBackend{rgw}, nil, opts},
		"2026.2 on RGW: the options":               {"2026.2", []*GlanceBackend{rgw}, nil, opts},
		"2026.1 on AWS: nothing":                   {"2026.1", []*GlanceBackend{aws}, nil, nil},
		"2026.1, extraOptions choose: theirs only": {"2026.1", []*GlanceBackend{own}, nil, nil},
	} {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(c.env, ChecksumEnv(c.release, c.backends)); diff != "" {
				t.Errorf("ChecksumEnv (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(c.options, ChecksumOptions(c.release, c.backends[0])); diff != "" {
				t.Errorf("ChecksumOptions (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLocationsLeakKeys(t *testing.T) {
	on := map[string]ConfigSection{"DEFAULT": {"show_image_direct_url": "True", "show_multiple_locations": "false", "workers": "2"}}
	for name, c := range map[string]struct {
		release string
		config  map[string]ConfigSection
		stores  int
		fields  []string
	}{
		"direct_url on 2025.2 with stores":   {"2025.2", on, 1, []string{"spec.extraConfig[DEFAULT][show_image_direct_url]"}},
		"both on 2022.2":                     {"2022.2", map[string]ConfigSection{"DEFAULT": {"show_image_direct_url": "yes", "show_multiple_locations": " 1 "}}, 2, []string{"spec.extraConfig[DEFAULT][show_image_direct_url]", "spec.extraConfig[DEFAULT][show_multiple_locations]"}},
		"on 2026.2: locations carry no keys": {"2026.2", on, 1, nil},
		"off":                                {"2025.2", map[string]ConfigSection{"DEFAULT": {"show_image_direct_url": "off"}}, 1, nil},
		"no store":                           {"2025.2", on, 0, nil},
		"another section":                    {"2025.2", map[string]ConfigSection{"glance_store": {"show_image_direct_url": "true"}}, 1, nil},
	} {
		t.Run(name, func(t *testing.T) {
			errs := LocationsLeakKeys(c.release, c.config, c.stores)
			var got []string
			for _, e := range errs {
				got = append(got, e.Field)
				if !strings.Contains(e.Detail, "leak the keys") || !strings.Contains(e.Detail, c.release) {
					t.Errorf("the message does not name the leak and the release: %s", e.Detail)
				}
			}
			slices.Sort(got)
			if !slices.Equal(got, c.fields) {
				t.Errorf("fields %v, want %v", got, c.fields)
			}
		})
	}
}
