package v1alpha1

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

// verdict is what a test asserts of one field error: where and which rule.
type verdict struct {
	Field  string
	Type   field.ErrorType
	Detail string
}

func verdicts(errs field.ErrorList) []verdict {
	var out []verdict
	for _, e := range errs {
		out = append(out, verdict{e.Field, e.Type, e.Detail})
	}
	return out
}

func validBackend() *GlanceBackend {
	b := &GlanceBackend{Spec: GlanceBackendSpec{
		GlanceRef: GlanceRefSpec{Name: "glance"},
		Type:      GlanceBackendTypeS3,
		S3: &S3BackendSpec{
			Host:                 "http://garage:3900",
			Bucket:               "glance-images",
			CredentialsSecretRef: SecretNameRefSpec{Name: "garage-s3-credentials"},
		},
	}}
	b.Name, b.Namespace = "primary", "openstack"
	b.Default()
	return b
}

func TestValidateGlanceBackend(t *testing.T) {
	invalid := func(f, detail string) verdict { return verdict{f, field.ErrorTypeInvalid, detail} }
	cases := map[string]struct {
		mutate func(*GlanceBackend)
		want   []verdict
	}{
		"valid": {mutate: func(*GlanceBackend) {}},
		"union: type S3 without s3": {
			mutate: func(b *GlanceBackend) { b.Spec.S3 = nil },
			want:   []verdict{invalid("spec", MsgS3Union)},
		},
		"type enum": {
			mutate: func(b *GlanceBackend) { b.Spec.Type = "File" },
			want: []verdict{
				{"spec.type", field.ErrorTypeNotSupported, `supported values: "S3"`},
				invalid("spec", MsgS3Union),
			},
		},
		"type required": {
			mutate: func(b *GlanceBackend) { b.Spec.Type = ""; b.Spec.S3 = nil },
			want:   []verdict{{"spec.type", field.ErrorTypeRequired, ""}},
		},
		"glanceRef.name minimum": {
			mutate: func(b *GlanceBackend) { b.Spec.GlanceRef.Name = "" },
			want:   []verdict{invalid("spec.glanceRef.name", "should be at least 1 chars long")},
		},
		"host without scheme": {
			mutate: func(b *GlanceBackend) { b.Spec.S3.Host = "garage:3900" },
			want:   []verdict{invalid("spec.s3.host", "should match '^https?://'")},
		},
		"host ftp": {
			mutate: func(b *GlanceBackend) { b.Spec.S3.Host = "ftp://garage" },
			want:   []verdict{invalid("spec.s3.host", "should match '^https?://'")},
		},
		"host empty": {
			mutate: func(b *GlanceBackend) { b.Spec.S3.Host = "" },
			want:   []verdict{invalid("spec.s3.host", "should be at least 1 chars long")},
		},
		"bucket with a carriage return (found by FuzzRules)": {
			mutate: func(b *GlanceBackend) { b.Spec.S3.Bucket = "\r" },
			want:   []verdict{invalid("spec.s3.bucket", MsgINIInjection)},
		},
		"region with a newline": {
			mutate: func(b *GlanceBackend) { b.Spec.S3.Region = "eu\nx = y" },
			want:   []verdict{invalid("spec.s3.region", MsgINIInjection)},
		},
		"host with a newline after its scheme": {
			mutate: func(b *GlanceBackend) { b.Spec.S3.Host = "http://s3\n[glance_store]" },
			want:   []verdict{invalid("spec.s3.host", MsgINIInjection)},
		},
		"bucket empty": {
			mutate: func(b *GlanceBackend) { b.Spec.S3.Bucket = "" },
			want:   []verdict{invalid("spec.s3.bucket", "should be at least 1 chars long")},
		},
		"credentialsSecretRef.name empty": {
			mutate: func(b *GlanceBackend) { b.Spec.S3.CredentialsSecretRef.Name = "" },
			want:   []verdict{invalid("spec.s3.credentialsSecretRef.name", "should be at least 1 chars long")},
		},
		"bucketURLFormat enum": {
			mutate: func(b *GlanceBackend) { b.Spec.S3.BucketURLFormat = "host" },
			want:   []verdict{{"spec.s3.bucketURLFormat", field.ErrorTypeNotSupported, `supported values: "path", "virtual"`}},
		},
		"bucketURLFormat virtual is fine": {
			mutate: func(b *GlanceBackend) { b.Spec.S3.BucketURLFormat = "virtual" },
		},
		"largeObjectSize minimum": {
			mutate: func(b *GlanceBackend) { b.Spec.S3.LargeObjectSize = ptr.To[int32](0) },
			want:   []verdict{invalid("spec.s3.largeObjectSize", "should be greater than or equal to 1")},
		},
		"largeObjectChunkSize minimum": {
			mutate: func(b *GlanceBackend) { b.Spec.S3.LargeObjectChunkSize = ptr.To[int32](-5) },
			want:   []verdict{invalid("spec.s3.largeObjectChunkSize", "should be greater than or equal to 1")},
		},
		"a largeObjectSize of 1 and a chunk of 5 are fine": {
			mutate: func(b *GlanceBackend) {
				b.Spec.S3.LargeObjectSize, b.Spec.S3.LargeObjectChunkSize = ptr.To[int32](1), ptr.To[int32](5)
			},
		},
		"a virtual-hosted bucket that is not a DNS label": {
			mutate: func(b *GlanceBackend) { b.Spec.S3.BucketURLFormat, b.Spec.S3.Bucket = "virtual", "Images.2024" },
			want:   []verdict{invalid("spec.s3", MsgVirtualBucketLabel)},
		},
		"a virtual-hosted bucket that is a DNS label": {
			mutate: func(b *GlanceBackend) { b.Spec.S3.BucketURLFormat, b.Spec.S3.Bucket = "virtual", "images-2024" },
		},
		"a chunk below S3's 5 MiB part minimum, which glance_store refuses": {
			mutate: func(b *GlanceBackend) { b.Spec.S3.LargeObjectChunkSize = ptr.To[int32](4) },
			want:   []verdict{invalid("spec.s3.largeObjectChunkSize", MsgChunkBelowS3Minimum)},
		},
		"every violation is reported, not just the first": {
			mutate: func(b *GlanceBackend) {
				b.Name = "default"
				b.Spec.S3.Host = "ftp://x"
				b.Spec.S3.Bucket = ""
				b.Spec.ExtraOptions = map[string]OptionValue{"s3_store_host": "y"}
			},
			want: []verdict{
				invalid("metadata.name", MsgReservedStoreName),
				invalid("spec.s3.host", "should match '^https?://'"),
				invalid("spec.s3.bucket", "should be at least 1 chars long"),
				{"spec.extraOptions[s3_store_host]", field.ErrorTypeForbidden, `option "s3_store_host" is owned by spec.s3.host`},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			b := validBackend()
			tc.mutate(b)
			if diff := cmp.Diff(tc.want, verdicts(ValidateGlanceBackend(b))); diff != "" {
				t.Errorf("ValidateGlanceBackend() (-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidateGlanceBackendUpdate(t *testing.T) {
	cases := map[string]struct {
		mutate func(*GlanceBackend)
		want   []verdict
	}{
		"unchanged":         {mutate: func(*GlanceBackend) {}},
		"isDefault mutable": {mutate: func(b *GlanceBackend) { b.Spec.IsDefault = true }},
		"glanceRef immutable": {
			mutate: func(b *GlanceBackend) { b.Spec.GlanceRef.Name = "other" },
			want:   []verdict{{"spec.glanceRef", field.ErrorTypeInvalid, MsgGlanceRefImmutable}},
		},
		"type immutable": {
			mutate: func(b *GlanceBackend) { b.Spec.Type = "File" },
			want:   []verdict{{"spec.type", field.ErrorTypeInvalid, MsgTypeImmutable}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			old, b := validBackend(), validBackend()
			tc.mutate(b)
			if diff := cmp.Diff(tc.want, verdicts(ValidateGlanceBackendUpdate(old, b))); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidateStoreName(t *testing.T) {
	reserved := verdict{"metadata.name", field.ErrorTypeInvalid, MsgReservedStoreName}
	prefix := verdict{"metadata.name", field.ErrorTypeInvalid, MsgReservedStorePrefix}
	notDNS := func(string) verdict {
		return verdict{"metadata.name", field.ErrorTypeInvalid,
			"a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"}
	}
	cases := map[string][]verdict{
		// Reserved sections, compared case-insensitively as oslo.config
		// looks groups up. Names that are not DNS subdomains are refused
		// twice: by the API server's name rule and by the reserved rule.
		"default":                 {reserved},
		"DEFAULT":                 {notDNS("DEFAULT"), reserved},
		"Default":                 {notDNS("Default"), reserved},
		"database":                {reserved},
		"keystone_authtoken":      {notDNS(""), reserved},
		"glance_store":            {notDNS(""), reserved},
		"paste_deploy":            {notDNS(""), reserved},
		"oslo_policy":             {notDNS(""), reserved},
		"os_glance_staging_store": {notDNS(""), prefix},
		"os_glance_tasks_store":   {notDNS(""), prefix},
		"os-glance-x":             {prefix},
		"os_glance_x":             {notDNS(""), prefix},
		// Look-alikes that must be accepted.
		"defaults":     nil,
		"my-default":   nil,
		"glance-store": nil,
		"vgw.archive":  nil,
		"os-glancey":   nil,
	}
	for name, want := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(want, verdicts(ValidateStoreName(name, field.NewPath("metadata", "name")))); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidateExtraOptions(t *testing.T) {
	p := "spec.extraOptions"
	forbidden := func(key, owner string) verdict {
		return verdict{p + "[" + key + "]", field.ErrorTypeForbidden, OwnedOptionMessage(key, owner)}
	}
	many := map[string]OptionValue{}
	for i := range 33 {
		many[strings.Repeat("k", i+1)] = "v"
	}
	cases := map[string]struct {
		opts map[string]OptionValue
		want []verdict
	}{
		"none":                         {},
		"a look-alike that is allowed": {opts: map[string]OptionValue{"s3_store_thread_pools": "10"}},
		"33 entries":                   {opts: many, want: []verdict{{p, field.ErrorTypeTooMany, "must have at most 32 items"}}},
		"32 entries are fine": {opts: func() map[string]OptionValue {
			m := map[string]OptionValue{}
			for i := range 32 {
				m[strings.Repeat("k", i+1)] = "v"
			}
			return m
		}()},
		"257-character key": {
			opts: map[string]OptionValue{strings.Repeat("k", 257): "v"},
			want: []verdict{{p + "[" + strings.Repeat("k", 257) + "]", field.ErrorTypeInvalid, MsgOptionKeyTooLong}},
		},
		"256-character key is fine": {opts: map[string]OptionValue{strings.Repeat("k", 256): "v"}},
		"1025-character value": {
			opts: map[string]OptionValue{"k": OptionValue(strings.Repeat("v", 1025))},
			want: []verdict{{p + "[k]", field.ErrorTypeTooLong, "may not be more than 1024 bytes"}},
		},
		"1024 characters of 3 bytes each are fine": {opts: map[string]OptionValue{"k": OptionValue(strings.Repeat("€", 1024))}},
		"key with a space": {
			opts: map[string]OptionValue{"a b": "v"},
			want: []verdict{{p + `["a b"]`, field.ErrorTypeInvalid, MsgOptionKeyPattern}},
		},
		"key with a dot": {
			opts: map[string]OptionValue{"a.b": "v"},
			want: []verdict{{p + `[a.b]`, field.ErrorTypeInvalid, MsgOptionKeyPattern}},
		},
		"denylisted key with a trailing space is caught by the pattern": {
			opts: map[string]OptionValue{"s3_store_host ": "v"},
			want: []verdict{{p + `["s3_store_host "]`, field.ErrorTypeInvalid, MsgOptionKeyPattern}},
		},
		"key with an embedded newline": {
			opts: map[string]OptionValue{"a\nb": "v"},
			want: []verdict{{p + `["a\nb"]`, field.ErrorTypeInvalid, MsgOptionKeyPattern}},
		},
		"value with a newline": {
			opts: map[string]OptionValue{"k": "a\nb = c"},
			want: []verdict{{p + "[k]", field.ErrorTypeInvalid, "value " + MsgINIInjection}},
		},
		"value with a carriage return": {
			opts: map[string]OptionValue{"k": "a\rb"},
			want: []verdict{{p + "[k]", field.ErrorTypeInvalid, "value " + MsgINIInjection}},
		},
	}
	for key, owner := range ExtraOptionOwners {
		cases["denylisted "+key] = struct {
			opts map[string]OptionValue
			want []verdict
		}{opts: map[string]OptionValue{key: "v"}, want: []verdict{forbidden(key, owner)}}
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, verdicts(ValidateExtraOptions(tc.opts, field.NewPath("spec", "extraOptions")))); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// The denylist is the contract's list, exactly.
func TestExtraOptionDenylistIsTheContracts(t *testing.T) {
	want := []string{
		"s3_store_access_key", "s3_store_bucket", "s3_store_bucket_url_format",
		"s3_store_create_bucket_on_put", "s3_store_host", "s3_store_large_object_chunk_size",
		"s3_store_large_object_size", "s3_store_region_name", "s3_store_secret_key", "store_description",
	}
	if diff := cmp.Diff(want, sortedKeys(ExtraOptionOwners)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
