package v1alpha1

// glance-krm's additive fields of a Glance: several Image APIs per Glance,
// image signature verification and the metadef write policy. A Glance that
// sets none of them means what the seed operator's Glance means.

// DefaultAPIName is the one Image API of a Glance without spec.apis, and
// the API spec.catalogAPI names when it is unset. Its objects keep the
// seed operator's names (the Glance's own name).
const DefaultAPIName = "default"

// GlanceAPISpec is one Image API of a Glance: its own glance-api workload
// with its own replicas and, optionally, its own subset of the Glance's
// stores and its own default among them. Several APIs let a new API run
// beside the old one and stores move between them before the catalog
// Service is switched over.
// +kubebuilder:validation:XValidation:rule=`!has(self.defaultBackend) || !has(self.backends) || self.defaultBackend in self.backends`,message=`defaultBackend must be one of this API's backends`
type GlanceAPISpec struct {
	// Name of the API: its objects are named <glance>-<name>, except the
	// API named "default", whose objects keep the Glance's own name.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=12
	// +kubebuilder:validation:Pattern=`^[a-z]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name"`

	// Replicas of this API's workload; defaults to spec.deployment.replicas.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Replicas *int32 `json:"replicas,omitempty"`

	// Backends are the GlanceBackends (attached to this Glance) this API
	// serves; all of them when unset.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=63
	Backends []string `json:"backends,omitempty"`

	// DefaultBackend is this API's default store ([glance_store]
	// default_backend); defaults to the GlanceBackend marked isDefault,
	// which must then be among this API's backends.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	DefaultBackend string `json:"defaultBackend,omitempty"`
}

// ImageSignatureVerificationSpec turns on Glance's image signature
// verification through the Key Manager service (barbican), which Glance
// reaches through the internal Identity endpoint.
type ImageSignatureVerificationSpec struct {
	// Enabled renders [key_manager] backend = barbican, [barbican]
	// auth_endpoint = spec.keystoneEndpoint and barbican_endpoint_type =
	// internal.
	Enabled bool `json:"enabled"`
}

// Metadef write policies.
const (
	// MetadefWritesAdminOnly refuses a policy override that lets a
	// non-admin create, update or delete metadef objects (Glance's
	// default, and the default here).
	MetadefWritesAdminOnly = "AdminOnly"
	// MetadefWritesPolicyOverrides lets the policy overrides decide; each
	// rule they open to non-admins is still reported, as a warning.
	MetadefWritesPolicyOverrides = "PolicyOverrides"
)

// APIs are the Image APIs of the Glance: spec.apis, or the one API named
// "default" with every store when it is unset.
func (s *GlanceSpec) EffectiveAPIs() []GlanceAPISpec {
	if len(s.APIs) == 0 {
		return []GlanceAPISpec{{Name: DefaultAPIName}}
	}
	return s.APIs
}

// EffectiveCatalogAPI is the API the stable Service selects.
func (s *GlanceSpec) EffectiveCatalogAPI() string {
	if s.CatalogAPI == "" {
		return DefaultAPIName
	}
	return s.CatalogAPI
}

// SignatureVerification tells whether image signature verification is on.
func (s *GlanceSpec) SignatureVerification() bool {
	return s.ImageSignatureVerification != nil && s.ImageSignatureVerification.Enabled
}

// APIObjectName is the name of an API's workload and of its own objects:
// the Glance's name for the API named "default", <glance>-<api> otherwise.
func APIObjectName(glance, api string) string {
	if api == DefaultAPIName {
		return glance
	}
	return glance + "-" + api
}

// ServedAPI is the Image API a workload of the Glance serves, the one rule
// the function (which wires it) and the controller (which judges it) both
// follow: the API its glance.openstack.c5c3.io/api label names, else the
// API it is named for (APIObjectName); without spec.apis, an unlabelled
// workload serves the one API, default. "" when it serves none (a label
// may name an API the Glance does not declare: the caller says so).
func (g *Glance) ServedAPI(workload, label string) string {
	if label != "" {
		return label
	}
	if len(g.Spec.APIs) == 0 {
		return DefaultAPIName
	}
	for _, a := range g.Spec.APIs {
		if workload == APIObjectName(g.Name, a.Name) {
			return a.Name
		}
	}
	return ""
}
