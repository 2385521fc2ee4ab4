package v1alpha1

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"
)

func TestStoreSettings(t *testing.T) {
	cases := map[string]struct {
		s3   *S3BackendSpec
		want []string // option=value, in order
	}{
		"no s3": {nil, nil},
		"required only": {&S3BackendSpec{Host: "http://s3:9000", Bucket: "b", BucketURLFormat: "path"},
			[]string{"s3_store_host=http://s3:9000", "s3_store_bucket=b", "s3_store_bucket_url_format=path"}},
		"every field, in the reference's order": {&S3BackendSpec{
			Host: "h", Bucket: "b", BucketURLFormat: "virtual", Region: "r", CreateBucketOnPut: true,
			CABundleRef: &CABundleRefSpec{Name: "ca"}, LargeObjectSize: ptr.To[int32](100), LargeObjectChunkSize: ptr.To[int32](10),
		}, []string{
			"s3_store_host=h", "s3_store_bucket=b", "s3_store_bucket_url_format=virtual", "s3_store_region_name=r",
			"s3_store_create_bucket_on_put=true", "s3_store_cacert=" + CABundlePath("store"),
			"s3_store_large_object_size=100", "s3_store_large_object_chunk_size=10",
		}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			b := &GlanceBackend{Spec: GlanceBackendSpec{S3: tc.s3}}
			b.Name = "store"
			var got []string
			for _, s := range b.StoreSettings() {
				got = append(got, s.Option+"="+s.Value)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("(-want +got)\n%s", d)
			}
		})
	}
}

// TestTypedOptionsAreOwned: extraOptions cannot set an option a typed
// field renders (the denylist names the same field), but the CA bundle's,
// which the seed's denylist leaves open.
func TestTypedOptionsAreOwned(t *testing.T) {
	for _, o := range TypedStoreOptions {
		owner, owned := ExtraOptionOwners[o.Option]
		if o.Option == "s3_store_cacert" {
			continue
		}
		if !owned || owner != o.Field {
			t.Errorf("%s renders %s, which extraOptions' denylist gives to %q", o.Field, o.Option, owner)
		}
	}
}
