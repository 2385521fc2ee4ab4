package glancekrm

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

// renderBackendsConf renders backends.conf: one [<name>] store section per
// attached backend, sorted by name. It carries nothing about which store is
// the default, so flipping isDefault leaves its content (and the hashed
// Secret name) unchanged; and no credential, which travels as environment.
func renderBackendsConf(g *v1alpha1.Glance, backends []*v1alpha1.GlanceBackend) *iniFile {
	f := &iniFile{header: []string{
		fmt.Sprintf("Rendered by glance-krm from the GlanceBackends attached to Glance %s. Do not edit.", nsName(g.Namespace, g.Name)),
		"S3 credentials are not here: at pod start the glance-krm-credentials init container writes them from their Secrets to " + v1alpha1.MountCredentialsDir + ".",
	}}
	for _, b := range backends {
		f.sections = append(f.sections, storeSection(b))
	}
	return f
}

// storeSection is the reference's table of typed S3 options, in its order,
// each rendered only when set so upstream defaults apply otherwise; then
// store_description; then extraOptions sorted by key.
func storeSection(b *v1alpha1.GlanceBackend) iniSection {
	s := iniSection{name: b.Name, comment: "GlanceBackend " + nsName(b.Namespace, b.Name)}
	s3 := b.Spec.S3
	s.set("s3_store_host", s3.Host)
	s.set("s3_store_bucket", s3.Bucket)
	s.set("s3_store_bucket_url_format", s3.BucketURLFormat)
	if s3.Region != "" {
		s.set("s3_store_region_name", s3.Region)
	}
	if s3.CreateBucketOnPut {
		s.set("s3_store_create_bucket_on_put", "true")
	}
	if s3.CABundleRef != nil {
		s.set("s3_store_cacert", v1alpha1.CABundlePath(b.Name))
	}
	if v := s3.LargeObjectSize; v != nil {
		s.set("s3_store_large_object_size", strconv.Itoa(int(*v)))
	}
	if v := s3.LargeObjectChunkSize; v != nil {
		s.set("s3_store_large_object_chunk_size", strconv.Itoa(int(*v)))
	}
	s.set("store_description", storeDescription(b))
	keys := make([]string, 0, len(b.Spec.ExtraOptions))
	for k := range b.Spec.ExtraOptions {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		s.set(k, string(b.Spec.ExtraOptions[k]))
	}
	return s
}

// storeDescription is what GET /v2/info/stores shows users next to the
// store id. It names the bucket, and not the endpoint, which is internal.
func storeDescription(b *v1alpha1.GlanceBackend) string {
	return "S3 bucket " + b.Spec.S3.Bucket
}

func nsName(ns, name string) string {
	if ns == "" {
		return name
	}
	return ns + "/" + name
}
