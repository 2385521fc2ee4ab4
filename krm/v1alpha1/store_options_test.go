package v1alpha1

import (
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"
	sigsyaml "sigs.k8s.io/yaml"
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

// Each typed store option names a field of the GlanceBackend CRD's schema
// (its path is derived from the Go field's JSON name), and, but the CA
// bundle's, which the seed's denylist leaves open, extraOptions may not
// set it.
func TestTypedStoreFieldsAreInTheSchema(t *testing.T) {
	raw, err := os.ReadFile("../crds/glance.openstack.c5c3.io_glancebackends.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var crd struct {
		Spec struct {
			Versions []struct {
				Schema struct {
					OpenAPIV3Schema map[string]any `json:"openAPIV3Schema"`
				} `json:"schema"`
			} `json:"versions"`
		} `json:"spec"`
	}
	if err := sigsyaml.Unmarshal(raw, &crd); err != nil {
		t.Fatal(err)
	}
	for _, o := range TypedStoreOptions {
		node := crd.Spec.Versions[0].Schema.OpenAPIV3Schema
		for _, part := range strings.Split(o.Field, ".") {
			props, _ := node["properties"].(map[string]any)
			node, _ = props[part].(map[string]any)
			if node == nil {
				t.Errorf("%s (%s) is not a field of the GlanceBackend schema", o.Field, o.Option)
				break
			}
		}
		owner, owned := ExtraOptionOwners[o.Option]
		if want := o.Option != "s3_store_cacert"; owned != want || owned && owner != o.Field {
			t.Errorf("%s renders %s, which extraOptions' denylist gives to %q", o.Field, o.Option, owner)
		}
	}
}
