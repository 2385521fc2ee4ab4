package v1alpha1

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/distribution/reference"
)

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
	LabelManagedBy     = "app.kubernetes.io/managed-by"
	ManagedByGlanceKRM = "glance-krm"
	ComponentBackends  = "backends"
	ComponentConfig    = "config"
	// ComponentWorkload marks the objects glance-krm generates from a
	// Glance (Deployment, Services, PDB, HPA, NetworkPolicy, HTTPRoute,
	// db-sync and db-contract Jobs, db-purge CronJob): each run replaces
	// them whole.
	ComponentWorkload = "workload"
	// LabelAPI names the Image API (spec.apis) a workload serves.
	LabelAPI           = Group + "/api"
	AnnotationRevision = Group + "/revision"
	// AnnotationRelease is the openStackRelease a rendered copy or a
	// glance-manage Job was made for: where the previous release is known
	// (kpt's package, the live Jobs), the upgrade path is judged from it.
	AnnotationRelease = Group + "/openstack-release"
	// AnnotationCarried marks a rendered copy keep-history carried over
	// from an earlier render for Flux: how many renders ago it was current.
	AnnotationCarried    = Group + "/carried"
	AnnotationArgoCDSync = "argocd.argoproj.io/sync-options"
	ArgoCDPruneLast      = "PruneLast=true"
	// Flux's post-build substitution rewrites ${...} anywhere in an object;
	// in a rendered INI file that would change what Glance reads (a value
	// holding "${x}" is legal and kept exactly). Every object the function
	// generates opts out.
	AnnotationFluxSubstitute = "kustomize.toolkit.fluxcd.io/substitute"
	FluxDisabled             = "disabled"

	// Every pod-level name the function writes starts with this prefix,
	// so that it never collides with a volume or container of the user's.
	ReservedPrefix = "glance-krm-"

	VolumeConfig      = ReservedPrefix + "config"
	VolumeCredentials = ReservedPrefix + "credentials"
	// CredentialsVolumeBytes is the size limit of the memory-backed
	// credentials volume (1Mi): the init container refuses to write more.
	CredentialsVolumeBytes = 1 << 20
	CredentialsVolumeSize  = "1Mi"
	VolumeCredentialsIn    = ReservedPrefix + "credentials-in"
	// The two directories oslo.config reads by default for glance-api
	// (project glance, prog glance-api), in this order, with or without
	// --config-dir flags and under a WSGI server too, where glance-api
	// takes no command-line flags at all: the rendered files (the
	// ConfigMap's glance-api.conf and the backends Secret's backends.conf,
	// one projected volume), then the credentials the init container
	// writes, which are read last.
	MountConfigDir       = "/etc/glance/glance.conf.d/"
	MountCredentialsDir  = "/etc/glance/glance-api.conf.d/"
	MountCredentialsIn   = "/var/run/glance-krm/credentials/"
	KeyGlanceAPIConf     = "glance-api.conf"
	KeyBackendsConf      = "backends.conf"
	CredentialsFile      = "credentials.conf"
	GlanceAPIContainer   = "glance-api"
	CredentialsContainer = ReservedPrefix + "credentials"

	// The pod's working directories the rendered glance-api.conf names
	// (staging for imports, the tasks' work dir, the image cache), each an
	// emptyDir of the generated workload bounded by spec.staging or
	// spec.imageCache.
	PodStagingDir    = "/var/lib/glance/staging"
	PodTasksDir      = "/var/lib/glance/tasks-work"
	PodImageCacheDir = "/var/lib/glance/image-cache"

	// APIPort is where glance-api listens in the pod, for either server;
	// the Services, probes, NetworkPolicy and the preStop drain name it.
	APIPort = int32(9292)

	// AnnotationGlanceAPIImage and AnnotationCredentialsImage record, on a
	// wired workload, the image the function last set, so that a later
	// change made after it (kustomize images: in an overlay, a kpt setter)
	// is told apart from a change of spec.image.
	AnnotationGlanceAPIImage   = Group + "/glance-api-image"
	AnnotationCredentialsImage = Group + "/credentials-image"

	// Options that the credentials init container writes; oslo.config
	// would let OS_<GROUP>__<OPTION> environment variables override them.
	OptionS3AccessKey  = "s3_store_access_key"
	OptionS3SecretKey  = "s3_store_secret_key"
	SectionKeystone    = "keystone_authtoken"
	OptionKeystonePass = "password"
	// The service user's application credential, in the credentials file.
	OptionKeystoneACID     = "application_credential_id"
	OptionKeystoneACSecret = "application_credential_secret"
	SectionDatabase        = "database"
	OptionDatabaseConnect  = "connection"

	EnvKeystonePassword   = "OS_KEYSTONE_AUTHTOKEN__PASSWORD"
	EnvDatabaseConnection = "OS_DATABASE__CONNECTION"
)

// OptionEnvName is the environment variable oslo.config reads an option
// from, and lets win over every file: 'OS_{}__{}'.format(group.upper(),
// option.upper()).
func OptionEnvName(section, option string) string {
	return "OS_" + strings.ToUpper(section) + "__" + strings.ToUpper(option)
}

// CredentialProblem says why a credential value cannot reach glance-api
// exactly, or "" when it can. oslo.config reads files as UTF-8 text, splits
// lines on CR and LF, and a NUL or other control character in a key is a
// paste error, never a real credential. The words never include the value.
func CredentialProblem(v []byte) string {
	switch {
	case len(v) == 0:
		return "is empty"
	case !utf8.Valid(v):
		return "is not valid UTF-8"
	}
	for _, r := range string(v) {
		switch {
		case r == '\n' || r == '\r':
			return "contains a newline or carriage return"
		case r == 0:
			return "contains a NUL character"
		case unicode.IsControl(r):
			return "contains a control character"
		}
	}
	return ""
}

// S3CredentialProblem is CredentialProblem for an S3 access or secret key,
// plus glance_store's own limit: it writes both keys into every image's
// location URL (s3://<access>:<secret>@<host>/<bucket>/<image>) and parses
// them back with urlparse and split, so a '#', '?' or '@' breaks the URL
// and a ':' silently cuts the key (measured with glance_store 4.1.0).
func S3CredentialProblem(v []byte) string {
	if p := CredentialProblem(v); p != "" {
		return p
	}
	if i := strings.IndexAny(string(v), "#?@:"); i >= 0 {
		return fmt.Sprintf("contains %q, which glance_store cannot carry in an image location URL (s3://access:secret@host/...)", v[i])
	}
	return ""
}

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

// CABundleDir is where a store's CA bundle lands, inside the rendered
// files' directory (oslo.config reads only its *.conf files).
const CABundleDir = MountConfigDir + "s3-ca/"

// CABundlePath is the file s3_store_cacert names for a store.
func CABundlePath(store string) string {
	return CABundleDir + store + ".pem"
}

// NamespacedName is how messages name an object: namespace/name, or the
// name alone when the object has no namespace (a build without one).
func NamespacedName(ns, name string) string {
	if ns == "" {
		return name
	}
	return ns + "/" + name
}

// ImageReferenceProblem says why ref is not an image reference a kubelet
// can pull (the distribution reference grammar containerd and Docker
// parse), or "".
func ImageReferenceProblem(ref string) string {
	if _, err := reference.ParseNormalizedNamed(ref); err != nil {
		return fmt.Sprintf("%q is not a valid image reference (%v)", ref, err)
	}
	return ""
}

// StatusEndpoint is where a Glance's Image API is reached, as the seed
// operator writes status.endpoint: https on the gateway's hostname (and
// path prefix) when spec.gateway routes to it (the Gateway terminates
// TLS), else the stable Service's in-cluster URL.
func (g *Glance) StatusEndpoint() string {
	if gw := g.Spec.Gateway; gw != nil {
		return "https://" + gw.Hostname + strings.TrimSuffix(gw.Path, "/") + "/"
	}
	return fmt.Sprintf("http://%s.%s.svc.cluster.local:%d/", g.Name, g.Namespace, APIPort)
}
