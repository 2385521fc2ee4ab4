package v1alpha1

import corev1 "k8s.io/api/core/v1"

// Logging, policy, paste middleware, plugins and the secret store: the
// seed operator's fields (C5C3/cobaltcore operators/glance at da0515f).

// LoggingSpec is oslo.log's output.
type LoggingSpec struct {
	// Format text, or json (renders logging.conf and log_config_append).
	// +kubebuilder:validation:Enum=text;json
	// +kubebuilder:default=text
	// +optional
	Format string `json:"format,omitempty"`

	// Level of the root logger in logging.conf.
	// +kubebuilder:validation:Enum=DEBUG;INFO;WARNING;ERROR;CRITICAL
	// +kubebuilder:default=INFO
	// +optional
	Level string `json:"level,omitempty"`

	// Debug is [DEFAULT] debug.
	// +optional
	Debug *bool `json:"debug,omitempty"`

	// PerLoggerLevels is [DEFAULT] default_log_levels (logger=LEVEL, sorted).
	// +optional
	// +kubebuilder:validation:XValidation:rule="self.all(k, k != '')",message="logger name must not be empty"
	// +kubebuilder:validation:XValidation:rule="self.all(k, self[k] in ['DEBUG','INFO','WARNING','ERROR','CRITICAL'])",message="per-logger level must be one of DEBUG, INFO, WARNING, ERROR, CRITICAL"
	PerLoggerLevels map[string]string `json:"perLoggerLevels,omitempty"`
}

// PolicySpec overrides oslo.policy rules; rendered as policy.yaml beside
// glance-api.conf and named by [oslo_policy] policy_file.
// +kubebuilder:validation:XValidation:rule="!has(self.rules) || self.rules.all(k, size(k) > 0)",message="policy rule name must not be empty"
// +kubebuilder:validation:XValidation:rule="!has(self.rules) || self.rules.all(k, size(self.rules[k]) > 0)",message="policy rule value must not be empty"
type PolicySpec struct {
	// Rules by name; they win over the ConfigMap's.
	// +optional
	Rules map[string]string `json:"rules,omitempty"`

	// ConfigMapRef names a ConfigMap whose policy.yaml key holds rules.
	// +optional
	ConfigMapRef *corev1.LocalObjectReference `json:"configMapRef,omitempty"`
}

// PluginSpec is one config section for a service plugin or driver.
type PluginSpec struct {
	// Name of the plugin.
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`

	// ConfigSection is the glance-api.conf section it writes.
	// +kubebuilder:validation:MinLength=1
	ConfigSection string `json:"configSection"`

	// Config is option -> value in that section.
	// +optional
	Config map[string]string `json:"config,omitempty"`
}

// PipelinePosition places a middleware before or after glance's own
// filters.
// +kubebuilder:validation:Enum=before;after
type PipelinePosition string

// MiddlewareSpec is one paste filter in glance-api-paste.ini.
type MiddlewareSpec struct {
	// Name of the filter.
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`

	// FilterFactory is its paste.filter_factory.
	// +kubebuilder:validation:MinLength=1
	FilterFactory string `json:"filterFactory"`

	// Position in the pipeline.
	Position PipelinePosition `json:"position"`

	// Config of the filter section.
	// +optional
	Config map[string]string `json:"config,omitempty"`
}

// SecretStoreRefSpec selects the External Secrets store the seed operator
// routes its ExternalSecrets through. The build records it; it renders
// nothing.
type SecretStoreRefSpec struct {
	// Kind is ClusterSecretStore or SecretStore.
	// +optional
	// +kubebuilder:default=ClusterSecretStore
	// +kubebuilder:validation:Enum=ClusterSecretStore;SecretStore
	Kind string `json:"kind,omitempty"`

	// Name of the store.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Name string `json:"name"`
}
