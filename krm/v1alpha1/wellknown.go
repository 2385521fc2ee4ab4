package v1alpha1

import "strings"

// Names that the function writes and the controller reads back from the
// cluster: the labels on rendered objects and workloads, the volume names,
// mount paths and file names, and the environment variables that carry
// secrets into glance-api.
const (
	// LabelGlance names the Glance a workload belongs to, or the Glance a
	// rendered object was rendered for.
	LabelGlance = Group + "/glance"
	// LabelComponent is "backends" or "config" on rendered objects.
	LabelComponent = Group + "/component"
	// LabelManagedBy marks objects glance-krm generated; together with
	// LabelGlance and LabelComponent it finds earlier copies to replace.
	LabelManagedBy       = "app.kubernetes.io/managed-by"
	ManagedByGlanceKRM   = "glance-krm"
	ComponentBackends    = "backends"
	ComponentConfig      = "config"
	AnnotationRevision   = Group + "/revision"
	AnnotationArgoCDSync = "argocd.argoproj.io/sync-options"
	ArgoCDPruneLast      = "PruneLast=true"

	VolumeConfig       = "config"
	VolumeBackends     = "backends"
	MountConfigDir     = "/etc/glance/glance.conf.d/"
	MountBackendsDir   = "/etc/glance/backends.conf.d/"
	KeyGlanceAPIConf   = "glance-api.conf"
	KeyBackendsConf    = "backends.conf"
	GlanceAPIContainer = "glance-api"

	EnvKeystonePassword   = "OS_KEYSTONE_AUTHTOKEN__PASSWORD"
	EnvDatabaseConnection = "OS_DATABASE__CONNECTION"
)

// StoreEnvNames are the environment variables oslo.config reads a store's
// S3 access and secret key from: 'OS_{}__{}'.format(group.upper(),
// option.upper()), so hyphens and dots of the store name are kept.
func StoreEnvNames(store string) (accessKey, secretKey string) {
	g := strings.ToUpper(store)
	return "OS_" + g + "__S3_STORE_ACCESS_KEY", "OS_" + g + "__S3_STORE_SECRET_KEY"
}

// IsStoreCredentialEnv tells whether an environment variable name is one of
// the store credential variables above (for any store).
func IsStoreCredentialEnv(name string) bool {
	return strings.HasPrefix(name, "OS_") &&
		(strings.HasSuffix(name, "__S3_STORE_ACCESS_KEY") || strings.HasSuffix(name, "__S3_STORE_SECRET_KEY"))
}
