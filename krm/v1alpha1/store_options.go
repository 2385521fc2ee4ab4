package v1alpha1

import (
	"reflect"
	"strconv"
	"strings"
)

// StoreOption is one option of a store's section that a typed field of the
// GlanceBackend renders, and that field.
// +kubebuilder:object:generate=false
type StoreOption struct {
	Field  string // the field's path, as results name it
	Option string // the glance_store option it renders
	// value is what the backend sets the option to; false leaves it out,
	// so that glance_store's default applies.
	value func(b *GlanceBackend) (string, bool)
}

// StoreSetting is a StoreOption the backend sets, with its value.
// +kubebuilder:object:generate=false
type StoreSetting struct {
	StoreOption
	Value string
}

// TypedStoreOptions are the store options the typed fields render, in the
// order the reference renders them (the function writes them in this
// order; the release rules check each against the release's catalog).
// Each field is named once, by its Go name: the path results name it by
// comes from its JSON name (s3Option).
var TypedStoreOptions = []StoreOption{
	s3Option("Host", "s3_store_host", func(s *S3BackendSpec, _ string) (string, bool) { return s.Host, true }),
	s3Option("Bucket", "s3_store_bucket", func(s *S3BackendSpec, _ string) (string, bool) { return s.Bucket, true }),
	s3Option("BucketURLFormat", "s3_store_bucket_url_format", func(s *S3BackendSpec, _ string) (string, bool) { return s.BucketURLFormat, true }),
	s3Option("Region", "s3_store_region_name", func(s *S3BackendSpec, _ string) (string, bool) { return s.Region, s.Region != "" }),
	s3Option("CreateBucketOnPut", "s3_store_create_bucket_on_put", func(s *S3BackendSpec, _ string) (string, bool) {
		return "true", s.CreateBucketOnPut
	}),
	s3Option("CABundleRef", "s3_store_cacert", func(s *S3BackendSpec, store string) (string, bool) {
		return CABundlePath(store), s.CABundleRef != nil
	}),
	s3Option("LargeObjectSize", "s3_store_large_object_size", func(s *S3BackendSpec, _ string) (string, bool) {
		return itoa(s.LargeObjectSize), s.LargeObjectSize != nil
	}),
	s3Option("LargeObjectChunkSize", "s3_store_large_object_chunk_size", func(s *S3BackendSpec, _ string) (string, bool) {
		return itoa(s.LargeObjectChunkSize), s.LargeObjectChunkSize != nil
	}),
}

// s3Option is the option a field of S3BackendSpec renders; its path is
// spec.s3.<the field's JSON name>.
func s3Option(goField, option string, value func(s *S3BackendSpec, store string) (string, bool)) StoreOption {
	f, ok := reflect.TypeFor[S3BackendSpec]().FieldByName(goField)
	if !ok {
		panic("S3BackendSpec has no field " + goField)
	}
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	return StoreOption{Field: "spec.s3." + name, Option: option, value: func(b *GlanceBackend) (string, bool) {
		return value(b.Spec.S3, b.Name)
	}}
}

func itoa(v *int32) string {
	if v == nil {
		return ""
	}
	return strconv.Itoa(int(*v))
}

// StoreSettings are the typed store options b sets, in TypedStoreOptions'
// order: host, bucket and URL format always, the others only when set, so
// that glance_store's defaults apply otherwise.
func (b *GlanceBackend) StoreSettings() []StoreSetting {
	if b.Spec.S3 == nil {
		return nil
	}
	var out []StoreSetting
	for _, o := range TypedStoreOptions {
		if v, set := o.value(b); set {
			out = append(out, StoreSetting{o, v})
		}
	}
	return out
}
