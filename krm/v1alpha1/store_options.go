package v1alpha1

import "strconv"

// StoreOption is one option of a store's section that a typed field of the
// GlanceBackend renders, and that field.
// +kubebuilder:object:generate=false
type StoreOption struct {
	Field  string // the field's path, as results name it
	Option string // the glance_store option it renders
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
var TypedStoreOptions = []StoreOption{
	{"spec.s3.host", "s3_store_host"},
	{"spec.s3.bucket", "s3_store_bucket"},
	{"spec.s3.bucketURLFormat", "s3_store_bucket_url_format"},
	{"spec.s3.region", "s3_store_region_name"},
	{"spec.s3.createBucketOnPut", "s3_store_create_bucket_on_put"},
	{"spec.s3.caBundleRef", "s3_store_cacert"},
	{"spec.s3.largeObjectSize", "s3_store_large_object_size"},
	{"spec.s3.largeObjectChunkSize", "s3_store_large_object_chunk_size"},
}

// StoreSettings are the typed store options b sets, in TypedStoreOptions'
// order: host, bucket and URL format always, the others only when set, so
// that glance_store's defaults apply otherwise.
func (b *GlanceBackend) StoreSettings() []StoreSetting {
	s3 := b.Spec.S3
	if s3 == nil {
		return nil
	}
	value := map[string]string{
		"spec.s3.host": s3.Host, "spec.s3.bucket": s3.Bucket, "spec.s3.bucketURLFormat": s3.BucketURLFormat,
		"spec.s3.region": s3.Region,
	}
	set := map[string]bool{"spec.s3.host": true, "spec.s3.bucket": true, "spec.s3.bucketURLFormat": true, "spec.s3.region": s3.Region != ""}
	if s3.CreateBucketOnPut {
		value["spec.s3.createBucketOnPut"], set["spec.s3.createBucketOnPut"] = "true", true
	}
	if s3.CABundleRef != nil {
		value["spec.s3.caBundleRef"], set["spec.s3.caBundleRef"] = CABundlePath(b.Name), true
	}
	if v := s3.LargeObjectSize; v != nil {
		value["spec.s3.largeObjectSize"], set["spec.s3.largeObjectSize"] = strconv.Itoa(int(*v)), true
	}
	if v := s3.LargeObjectChunkSize; v != nil {
		value["spec.s3.largeObjectChunkSize"], set["spec.s3.largeObjectChunkSize"] = strconv.Itoa(int(*v)), true
	}
	var out []StoreSetting
	for _, o := range TypedStoreOptions {
		if set[o.Field] {
			out = append(out, StoreSetting{o, value[o.Field]})
		}
	}
	return out
}
