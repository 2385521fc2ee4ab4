package render

import (
	"fmt"
	"slices"

	"github.com/c5c3/glance-krm/fn/oslo"
	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

// renderBackendsConf renders backends.conf: one [<name>] store section per
// attached backend, sorted by name. It carries nothing about which store is
// the default, so flipping isDefault leaves its content (and the hashed
// Secret name) unchanged; and no credential, which travels as environment.
func renderBackendsConf(g *v1alpha1.Glance, backends []*v1alpha1.GlanceBackend) *oslo.File {
	f := &oslo.File{Header: []string{
		fmt.Sprintf("Rendered by glance-krm from the GlanceBackends attached to Glance %s. Do not edit.", v1alpha1.NamespacedName(g.Namespace, g.Name)),
		"S3 credentials are not here: at pod start the glance-krm-credentials init container writes them from their Secrets to " + v1alpha1.MountCredentialsDir + ".",
	}}
	for _, b := range backends {
		f.Sections = append(f.Sections, storeSection(g.Spec.OpenStackRelease, b))
	}
	return f
}

// storeSection is the typed S3 options (v1alpha1.TypedStoreOptions, the
// reference's order, each only when set); then the checksum options the
// release needs on this server (v1alpha1.ChecksumOptions, LP #2121144);
// then store_description; then extraOptions sorted by key.
func storeSection(release string, b *v1alpha1.GlanceBackend) oslo.Section {
	s := oslo.Section{Name: b.Name, Comment: "GlanceBackend " + v1alpha1.NamespacedName(b.Namespace, b.Name)}
	for _, o := range b.StoreSettings() {
		s.Set(o.Option, o.Value)
	}
	for _, o := range v1alpha1.ChecksumOptions(release, b) {
		s.Set(o[0], o[1])
	}
	s.Set("store_description", storeDescription(b))
	keys := make([]string, 0, len(b.Spec.ExtraOptions))
	for k := range b.Spec.ExtraOptions {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		s.Set(k, string(b.Spec.ExtraOptions[k]))
	}
	return s
}

// storeDescription is what GET /v2/info/stores shows users next to the
// store id. It names the bucket, and not the endpoint, which is internal.
func storeDescription(b *v1alpha1.GlanceBackend) string {
	return "S3 bucket " + b.Spec.S3.Bucket
}
