package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Glance is one OpenStack Image API deployment. glance-krm renders its
// glance-api.conf from this spec; the image stores attach to it as
// GlanceBackend objects pointing here.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=openstack
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=='Ready')].status`
// +kubebuilder:printcolumn:name="Release",type=string,JSONPath=`.status.installedRelease`
// +kubebuilder:printcolumn:name="Endpoint",type=string,JSONPath=`.status.endpoint`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule=`size(self.metadata.name) <= 43`,message=`name must be at most 43 characters: the db-purge CronJob appends "-db-purge" and Kubernetes caps CronJob names at 52 characters`
type Glance struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec describes the Image API deployment.
	Spec GlanceSpec `json:"spec"`
	// Status is written by the runtime controller only.
	// +optional
	Status GlanceStatus `json:"status,omitempty"`
}

// GlanceSpec is the seed operator's Glance spec, whole, plus glance-krm's
// optional extensions.
// +kubebuilder:validation:XValidation:rule="has(self.targetClusterRef) == has(oldSelf.targetClusterRef)",message="targetClusterRef is immutable"
// +kubebuilder:validation:XValidation:rule="!has(self.targetClusterRef) || !has(oldSelf.targetClusterRef) || self.targetClusterRef.name == oldSelf.targetClusterRef.name",message="targetClusterRef is immutable"
// +kubebuilder:validation:XValidation:rule=`!has(self.importPlugins) || !has(self.importPlugins.decompression) || (has(self.staging) && (has(self.staging.sizeLimit) || (has(self.staging.unbounded) && self.staging.unbounded)))`,message=`spec.staging.sizeLimit (or spec.staging.unbounded) must be set explicitly while importPlugins.decompression is enabled: the plugin expands the staged image by a ratio the caller picks and nothing caps the result`
// +kubebuilder:validation:XValidation:rule=`!has(self.imageCache) || !has(self.middleware) || !self.middleware.exists(m, m.name == 'cache')`,message=`the "cache" paste filter is injected while spec.imageCache is set: rename this middleware or unset spec.imageCache`
// +kubebuilder:validation:XValidation:rule=`!has(self.apiServer) || !has(self.apiServer.uwsgi) || !has(self.apiServer.uwsgi.harakiri) || self.apiServer.uwsgi.harakiri < (has(self.deployment) && has(self.deployment.terminationGracePeriodSeconds) ? self.deployment.terminationGracePeriodSeconds : 30) - (has(self.deployment) && has(self.deployment.preStopSleepSeconds) ? self.deployment.preStopSleepSeconds : 5)`,message=`apiServer.uwsgi.harakiri must be strictly less than terminationGracePeriodSeconds - preStopSleepSeconds`
// +kubebuilder:validation:XValidation:rule=`has(self.apis) ? self.apis.exists(a, a.name == (has(self.catalogAPI) ? self.catalogAPI : 'default')) : (!has(self.catalogAPI) || self.catalogAPI == 'default')`,message=`spec.catalogAPI must name an API of spec.apis (it defaults to "default"; without spec.apis the one API is "default")`
// +kubebuilder:validation:XValidation:rule=`!has(self.imageSignatureVerification) || !self.imageSignatureVerification.enabled || !has(self.extraConfig) || !self.extraConfig.exists(s, (s.lowerAscii() == 'key_manager' && 'backend' in self.extraConfig[s]) || (s.lowerAscii() == 'barbican' && ('auth_endpoint' in self.extraConfig[s] || 'barbican_endpoint_type' in self.extraConfig[s])))`,message=`options [key_manager] backend, [barbican] auth_endpoint and [barbican] barbican_endpoint_type are owned by spec.imageSignatureVerification while it is enabled`
// +kubebuilder:validation:XValidation:rule=`!has(self.imageSignatureVerification) || !self.imageSignatureVerification.enabled || !has(self.extraConfig) || !self.extraConfig.exists(s, s.lowerAscii() == 'key_manager' && ('api_class' in self.extraConfig[s] || 'auth_url' in self.extraConfig[s]))`,message=`options [key_manager] api_class and [key_manager] auth_url are deprecated spellings of [key_manager] backend and [barbican] auth_endpoint, which oslo.config still reads; those options are owned by spec.imageSignatureVerification while it is enabled`
// +kubebuilder:validation:XValidation:rule=`!has(self.autoscaling) || has(self.autoscaling.minReplicas) || (has(self.deployment) && has(self.deployment.replicas) ? self.deployment.replicas : 3) <= self.autoscaling.maxReplicas`,message=`maxReplicas must be >= spec.deployment.replicas when minReplicas is not set, because minReplicas defaults to spec.deployment.replicas`
// +kubebuilder:validation:XValidation:rule=`!(has(self.autoscaling) && has(self.deployment) && has(self.deployment.verticalAutoscaling))`,message=`spec.deployment.verticalAutoscaling cannot be set while spec.autoscaling scales the same Deployment`
type GlanceSpec struct {
	// OpenStackRelease is the OpenStack release series, for example 2025.2.
	// +kubebuilder:validation:Pattern=`^\d{4}\.[12]$`
	OpenStackRelease string `json:"openStackRelease"`

	// Image is the glance-api container image.
	Image ImageSpec `json:"image"`

	// KeystoneEndpoint is the Identity API URL the service authenticates
	// against ([keystone_authtoken] auth_url).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:Pattern=`^https?://`
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule=`!self.contains('\n') && !self.contains('\r')`,message=`must not contain a newline or carriage return (INI injection guard)`
	KeystoneEndpoint string `json:"keystoneEndpoint"`

	// KeystonePublicEndpoint is the browser-facing Identity URL returned in
	// WWW-Authenticate ([keystone_authtoken] www_authenticate_uri); defaults
	// to keystoneEndpoint.
	// +optional
	// +kubebuilder:validation:Pattern=`^https?://`
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule=`!self.contains('\n') && !self.contains('\r')`,message=`must not contain a newline or carriage return (INI injection guard)`
	KeystonePublicEndpoint string `json:"keystonePublicEndpoint,omitempty"`

	// Region is the Identity region ([keystone_authtoken] region_name).
	// +optional
	// +kubebuilder:validation:MaxLength=128
	// +kubebuilder:validation:XValidation:rule=`!self.contains('\n') && !self.contains('\r')`,message=`must not contain a newline or carriage return (INI injection guard)`
	Region string `json:"region,omitempty"`

	// ServiceUser is the Keystone user the service authenticates as.
	ServiceUser ServiceUserSpec `json:"serviceUser"`

	// Database is the MariaDB the service uses: a managed cluster
	// (clusterRef) or an existing server (host), and the Secret holding
	// the password (key password; username too, outside Static managed
	// mode).
	Database DatabaseSpec `json:"database"`

	// Cache is the memcached for Keystone token caching
	// ([keystone_authtoken] memcached_servers).
	Cache CacheSpec `json:"cache"`

	// Deployment holds the glance-api pods' knobs: replicas 3 when unset,
	// the resources as DeploymentSpec.Resources says.
	// +optional
	// +kubebuilder:default={}
	Deployment DeploymentSpec `json:"deployment,omitempty"`

	// Jobs sizes, prioritizes and places the pods of the Glance's Jobs and
	// CronJob (db-sync, db-contract, db-purge, the store drains); what it
	// leaves unset follows spec.deployment (the seed's newer spec.jobs).
	// +optional
	Jobs *JobSpec `json:"jobs,omitempty"`

	// APIServer tunes the glance-api process.
	// +optional
	APIServer *APIServerSpec `json:"apiServer,omitempty"`

	// ImportFiltering constrains web-download imports.
	// +optional
	ImportFiltering *ImportFilteringSpec `json:"importFiltering,omitempty"`

	// ImportPlugins enables image-import plugins.
	// +optional
	ImportPlugins *ImportPluginsSpec `json:"importPlugins,omitempty"`

	// DBPurge tunes the database purge CronJob.
	// +optional
	DBPurge *DBPurgeSpec `json:"dbPurge,omitempty"`

	// Staging bounds the import scratch space.
	// +optional
	Staging *StagingSpec `json:"staging,omitempty"`

	// ImageCache enables the per-replica image cache.
	// +optional
	ImageCache *ImageCacheSpec `json:"imageCache,omitempty"`

	// Gateway exposes the API through a Gateway API HTTPRoute.
	// +optional
	Gateway *GatewaySpec `json:"gateway,omitempty"`

	// NetworkPolicy isolates the glance-api pods.
	// +optional
	NetworkPolicy *NetworkPolicySpec `json:"networkPolicy,omitempty"`

	// Autoscaling asks for a HorizontalPodAutoscaler.
	// +optional
	Autoscaling *AutoscalingSpec `json:"autoscaling,omitempty"`

	// Logging configures oslo.log (text, INFO when unset, as the seed
	// operator's webhook materializes it).
	// +optional
	// +kubebuilder:default={}
	Logging *LoggingSpec `json:"logging,omitempty"`

	// SecretStoreRef selects the External Secrets store (seed operator
	// runtime; recorded, not rendered).
	// +optional
	SecretStoreRef *SecretStoreRefSpec `json:"secretStoreRef,omitempty"`

	// PolicyOverrides renders policy.yaml.
	// +optional
	// +kubebuilder:validation:XValidation:rule="(has(self.rules) && size(self.rules) > 0) || self.configMapRef != null",message="at least one of rules or configMapRef must be set"
	PolicyOverrides *PolicySpec `json:"policyOverrides,omitempty"`

	// Middleware adds paste filters to glance-api-paste.ini.
	// +optional
	Middleware []MiddlewareSpec `json:"middleware,omitempty"`

	// Plugins add config sections, keyed by section.
	// +optional
	// +listType=map
	// +listMapKey=configSection
	Plugins []PluginSpec `json:"plugins,omitempty"`

	// ExtraConfig is the escape hatch for glance-api.conf:
	// section -> option -> value. Options glance-krm renders from a typed
	// field are refused and name the field that owns them.
	// +optional
	// +kubebuilder:validation:MaxProperties=32
	// +kubebuilder:validation:XValidation:rule=`self.all(s, !s.contains('\n') && !s.contains('\r'))`,message=`section must not contain a newline or carriage return (INI injection guard)`
	// +kubebuilder:validation:XValidation:rule="self.all(s, size(s) <= 256)",message="section must be at most 256 characters"
	// +kubebuilder:validation:XValidation:rule=`self.all(s, s.matches('^[A-Za-z0-9_.-]+$'))`,message=`section name must match ^[A-Za-z0-9_.-]+$`
	// +kubebuilder:validation:XValidation:rule=`!self.exists(s, s == 'DEFAULT' && 'enabled_backends' in self[s])`,message=`option "enabled_backends" in section [DEFAULT] is owned by the GlanceBackends attached to this Glance (their spec.glanceRef)`
	// +kubebuilder:validation:XValidation:rule=`!self.exists(s, s.lowerAscii() == 'glance_store' && 'default_backend' in self[s])`,message=`option "default_backend" in section [glance_store] is owned by the GlanceBackend marked spec.isDefault`
	// +kubebuilder:validation:XValidation:rule=`!self.exists(s, s.lowerAscii() == 'keystone_authtoken' && 'auth_type' in self[s])`,message=`option "auth_type" in section [keystone_authtoken] is owned by spec.serviceUser (password, or v3applicationcredential with spec.serviceUser.applicationCredential)`
	// +kubebuilder:validation:XValidation:rule=`!self.exists(s, s.lowerAscii() == 'keystone_authtoken' && 'auth_url' in self[s])`,message=`option "auth_url" in section [keystone_authtoken] is owned by spec.keystoneEndpoint`
	// +kubebuilder:validation:XValidation:rule=`!self.exists(s, s.lowerAscii() == 'keystone_authtoken' && 'www_authenticate_uri' in self[s])`,message=`option "www_authenticate_uri" in section [keystone_authtoken] is owned by spec.keystonePublicEndpoint`
	// +kubebuilder:validation:XValidation:rule=`!self.exists(s, s.lowerAscii() == 'keystone_authtoken' && 'username' in self[s])`,message=`option "username" in section [keystone_authtoken] is owned by spec.serviceUser.username`
	// +kubebuilder:validation:XValidation:rule=`!self.exists(s, s.lowerAscii() == 'keystone_authtoken' && 'project_name' in self[s])`,message=`option "project_name" in section [keystone_authtoken] is owned by spec.serviceUser.projectName`
	// +kubebuilder:validation:XValidation:rule=`!self.exists(s, s.lowerAscii() == 'keystone_authtoken' && 'user_domain_name' in self[s])`,message=`option "user_domain_name" in section [keystone_authtoken] is owned by spec.serviceUser.userDomainName`
	// +kubebuilder:validation:XValidation:rule=`!self.exists(s, s.lowerAscii() == 'keystone_authtoken' && 'project_domain_name' in self[s])`,message=`option "project_domain_name" in section [keystone_authtoken] is owned by spec.serviceUser.projectDomainName`
	// +kubebuilder:validation:XValidation:rule=`!self.exists(s, s.lowerAscii() == 'keystone_authtoken' && 'password' in self[s])`,message=`option "password" in section [keystone_authtoken] is owned by spec.serviceUser.secretRef`
	// +kubebuilder:validation:XValidation:rule=`!self.exists(s, s.lowerAscii() == 'keystone_authtoken' && 'application_credential_id' in self[s])`,message=`option "application_credential_id" in section [keystone_authtoken] is owned by spec.serviceUser.applicationCredential`
	// +kubebuilder:validation:XValidation:rule=`!self.exists(s, s.lowerAscii() == 'keystone_authtoken' && 'application_credential_name' in self[s])`,message=`option "application_credential_name" in section [keystone_authtoken] is owned by spec.serviceUser.applicationCredential`
	// +kubebuilder:validation:XValidation:rule=`!self.exists(s, s.lowerAscii() == 'keystone_authtoken' && 'application_credential_secret' in self[s])`,message=`option "application_credential_secret" in section [keystone_authtoken] is owned by spec.serviceUser.applicationCredential`
	// +kubebuilder:validation:XValidation:rule=`!self.exists(s, s.lowerAscii() == 'keystone_authtoken' && 'region_name' in self[s])`,message=`option "region_name" in section [keystone_authtoken] is owned by spec.region`
	// +kubebuilder:validation:XValidation:rule=`!self.exists(s, s.lowerAscii() == 'keystone_authtoken' && 'memcached_servers' in self[s])`,message=`option "memcached_servers" in section [keystone_authtoken] is owned by spec.cache (servers or clusterRef)`
	// +kubebuilder:validation:XValidation:rule=`!self.exists(s, s.lowerAscii() == 'database' && 'connection' in self[s])`,message=`option "connection" in section [database] is owned by spec.database.secretRef`
	// +kubebuilder:validation:XValidation:rule=`!self.exists(s, s == 'DEFAULT' && 'image_cache_dir' in self[s])`,message=`option "image_cache_dir" in section [DEFAULT] is owned by spec.imageCache`
	// +kubebuilder:validation:XValidation:rule=`!self.exists(s, s == 'DEFAULT' && 'image_cache_driver' in self[s])`,message=`option "image_cache_driver" in section [DEFAULT] is owned by spec.imageCache`
	// +kubebuilder:validation:XValidation:rule=`!self.exists(s, s == 'DEFAULT' && 'image_cache_max_size' in self[s])`,message=`option "image_cache_max_size" in section [DEFAULT] is owned by spec.imageCache`
	// +kubebuilder:validation:XValidation:rule=`!self.exists(s, s.lowerAscii() == 'import_filtering_opts' && 'allowed_schemes' in self[s])`,message=`option "allowed_schemes" in section [import_filtering_opts] is owned by spec.importFiltering`
	// +kubebuilder:validation:XValidation:rule=`!self.exists(s, s.lowerAscii() == 'import_filtering_opts' && 'disallowed_schemes' in self[s])`,message=`option "disallowed_schemes" in section [import_filtering_opts] is owned by spec.importFiltering`
	// +kubebuilder:validation:XValidation:rule=`!self.exists(s, s.lowerAscii() == 'import_filtering_opts' && 'allowed_hosts' in self[s])`,message=`option "allowed_hosts" in section [import_filtering_opts] is owned by spec.importFiltering`
	// +kubebuilder:validation:XValidation:rule=`!self.exists(s, s.lowerAscii() == 'import_filtering_opts' && 'disallowed_hosts' in self[s])`,message=`option "disallowed_hosts" in section [import_filtering_opts] is owned by spec.importFiltering`
	// +kubebuilder:validation:XValidation:rule=`!self.exists(s, s.lowerAscii() == 'import_filtering_opts' && 'allowed_ports' in self[s])`,message=`option "allowed_ports" in section [import_filtering_opts] is owned by spec.importFiltering`
	// +kubebuilder:validation:XValidation:rule=`!self.exists(s, s.lowerAscii() == 'import_filtering_opts' && 'disallowed_ports' in self[s])`,message=`option "disallowed_ports" in section [import_filtering_opts] is owned by spec.importFiltering`
	// +kubebuilder:validation:XValidation:rule=`!self.exists(s, s.lowerAscii() == 'image_import_opts' && 'image_import_plugins' in self[s])`,message=`option "image_import_plugins" in section [image_import_opts] is owned by spec.importPlugins`
	// +kubebuilder:validation:XValidation:rule=`!self.exists(s, s.lowerAscii() == 'image_conversion' && 'output_format' in self[s])`,message=`option "output_format" in section [image_conversion] is owned by spec.importPlugins`
	// +kubebuilder:validation:XValidation:rule=`!self.exists(s, s.lowerAscii() == 'inject_metadata_properties' && 'inject' in self[s])`,message=`option "inject" in section [inject_metadata_properties] is owned by spec.importPlugins`
	// +kubebuilder:validation:XValidation:rule=`!self.exists(s, s.lowerAscii() == 'inject_metadata_properties' && 'ignore_user_roles' in self[s])`,message=`option "ignore_user_roles" in section [inject_metadata_properties] is owned by spec.importPlugins`
	// +kubebuilder:validation:XValidation:rule=`!self.exists(s, s == 'DEFAULT' && 'sql_connection' in self[s])`,message=`option "sql_connection" in section [DEFAULT] is a deprecated spelling of [database] connection, which oslo.config still reads; that option is owned by spec.database.secretRef`
	// +kubebuilder:validation:XValidation:rule=`!self.exists(s, s.lowerAscii() == 'database' && 'sql_connection' in self[s])`,message=`option "sql_connection" in section [database] is a deprecated spelling of [database] connection, which oslo.config still reads; that option is owned by spec.database.secretRef`
	// +kubebuilder:validation:XValidation:rule=`!self.exists(s, s.lowerAscii() == 'keystone_authtoken' && 'auth_plugin' in self[s])`,message=`option "auth_plugin" in section [keystone_authtoken] is a deprecated spelling of [keystone_authtoken] auth_type, which oslo.config still reads; that option is owned by spec.serviceUser (password, or v3applicationcredential with spec.serviceUser.applicationCredential)`
	// +kubebuilder:validation:XValidation:rule=`!self.exists(s, s.lowerAscii() == 'keystone_authtoken' && 'auth_uri' in self[s])`,message=`option "auth_uri" in section [keystone_authtoken] is a deprecated spelling of [keystone_authtoken] www_authenticate_uri, which oslo.config still reads; that option is owned by spec.keystonePublicEndpoint`
	// +kubebuilder:validation:XValidation:rule=`!self.exists(s, s.lowerAscii() == 'keystone_authtoken' && 'memcache_servers' in self[s])`,message=`option "memcache_servers" in section [keystone_authtoken] is a deprecated spelling of [keystone_authtoken] memcached_servers, which oslo.config still reads; that option is owned by spec.cache (servers or clusterRef)`
	// +kubebuilder:validation:XValidation:rule=`!self.exists(s, s.lowerAscii() == 'keystone_authtoken' && 'tenant-name' in self[s])`,message=`option "tenant-name" in section [keystone_authtoken] is a deprecated spelling of [keystone_authtoken] project_name, which oslo.config still reads; that option is owned by spec.serviceUser.projectName`
	// +kubebuilder:validation:XValidation:rule=`!self.exists(s, s.lowerAscii() == 'keystone_authtoken' && 'tenant_name' in self[s])`,message=`option "tenant_name" in section [keystone_authtoken] is a deprecated spelling of [keystone_authtoken] project_name, which oslo.config still reads; that option is owned by spec.serviceUser.projectName`
	// +kubebuilder:validation:XValidation:rule=`!self.exists(s, s.lowerAscii() == 'keystone_authtoken' && 'user-name' in self[s])`,message=`option "user-name" in section [keystone_authtoken] is a deprecated spelling of [keystone_authtoken] username, which oslo.config still reads; that option is owned by spec.serviceUser.username`
	// +kubebuilder:validation:XValidation:rule=`!self.exists(s, s.lowerAscii() == 'keystone_authtoken' && 'user_name' in self[s])`,message=`option "user_name" in section [keystone_authtoken] is a deprecated spelling of [keystone_authtoken] username, which oslo.config still reads; that option is owned by spec.serviceUser.username`
	// +kubebuilder:validation:XValidation:rule=`!self.exists(s, s.lowerAscii() == 'sql' && 'connection' in self[s])`,message=`option "connection" in section [sql] is a deprecated spelling of [database] connection, which oslo.config still reads; that option is owned by spec.database.secretRef`
	// +kubebuilder:validation:XValidation:rule=`!self.exists(s, s == 'DEFAULT' && ('metadata_encryption_key' in self[s] || 'notification_transport_url' in self[s] || 'transport_url' in self[s]))`,message=`section [DEFAULT] holds an option Glance marks secret (metadata_encryption_key, notification_transport_url, transport_url): extraConfig is rendered into a plain ConfigMap; put it in an INI file in a Secret of your own, mount that into the glance-api container and add --config-dir for its folder to the container's args`
	// +kubebuilder:validation:XValidation:rule=`!self.exists(s, s.lowerAscii() == 'amqp1' && ('ssl_key_password' in self[s]))`,message=`section [amqp1] holds an option Glance marks secret (ssl_key_password): extraConfig is rendered into a plain ConfigMap; put it in an INI file in a Secret of your own, mount that into the glance-api container and add --config-dir for its folder to the container's args`
	// +kubebuilder:validation:XValidation:rule=`!self.exists(s, s.lowerAscii() == 'backend_defaults' && ('s3_store_access_key' in self[s] || 's3_store_secret_key' in self[s]))`,message=`section [backend_defaults] holds an option Glance marks secret (s3_store_access_key, s3_store_secret_key): extraConfig is rendered into a plain ConfigMap; put it in an INI file in a Secret of your own, mount that into the glance-api container and add --config-dir for its folder to the container's args`
	// +kubebuilder:validation:XValidation:rule=`!self.exists(s, s.lowerAscii() == 'cinder' && ('cinder_store_application_credential_secret' in self[s] || 'cinder_store_password' in self[s]))`,message=`section [cinder] holds an option Glance marks secret (cinder_store_application_credential_secret, cinder_store_password): extraConfig is rendered into a plain ConfigMap; put it in an INI file in a Secret of your own, mount that into the glance-api container and add --config-dir for its folder to the container's args`
	// +kubebuilder:validation:XValidation:rule=`!self.exists(s, s.lowerAscii() == 'database' && ('asyncio_connection' in self[s] || 'asyncio_slave_connection' in self[s] || 'slave_connection' in self[s]))`,message=`section [database] holds an option Glance marks secret (asyncio_connection, asyncio_slave_connection, slave_connection): extraConfig is rendered into a plain ConfigMap; put it in an INI file in a Secret of your own, mount that into the glance-api container and add --config-dir for its folder to the container's args`
	// +kubebuilder:validation:XValidation:rule=`!self.exists(s, s.lowerAscii() == 'glance_store' && ('cinder_store_application_credential_secret' in self[s] || 'cinder_store_password' in self[s] || 's3_store_access_key' in self[s] || 's3_store_secret_key' in self[s] || 'swift_store_application_credential_id' in self[s] || 'swift_store_application_credential_secret' in self[s] || 'swift_store_key' in self[s] || 'swift_store_user' in self[s] || 'vmware_server_password' in self[s]))`,message=`section [glance_store] holds an option Glance marks secret (cinder_store_application_credential_secret, cinder_store_password, s3_store_access_key, s3_store_secret_key, swift_store_application_credential_id, swift_store_application_credential_secret, swift_store_key, swift_store_user, vmware_server_password): extraConfig is rendered into a plain ConfigMap; put it in an INI file in a Secret of your own, mount that into the glance-api container and add --config-dir for its folder to the container's args`
	// +kubebuilder:validation:XValidation:rule=`!self.exists(s, s.lowerAscii() == 'key_manager' && ('password' in self[s] || 'token' in self[s]))`,message=`section [key_manager] holds an option Glance marks secret (password, token): extraConfig is rendered into a plain ConfigMap; put it in an INI file in a Secret of your own, mount that into the glance-api container and add --config-dir for its folder to the container's args`
	// +kubebuilder:validation:XValidation:rule=`!self.exists(s, s.lowerAscii() == 'keystone_authtoken' && ('memcache_password' in self[s] || 'memcache_secret_key' in self[s]))`,message=`section [keystone_authtoken] holds an option Glance marks secret (memcache_password, memcache_secret_key): extraConfig is rendered into a plain ConfigMap; put it in an INI file in a Secret of your own, mount that into the glance-api container and add --config-dir for its folder to the container's args`
	// +kubebuilder:validation:XValidation:rule=`!self.exists(s, s.lowerAscii() == 'oslo_limit' && ('password' in self[s]))`,message=`section [oslo_limit] holds an option Glance marks secret (password): extraConfig is rendered into a plain ConfigMap; put it in an INI file in a Secret of your own, mount that into the glance-api container and add --config-dir for its folder to the container's args`
	// +kubebuilder:validation:XValidation:rule=`!self.exists(s, s.lowerAscii() == 'oslo_messaging_amqp' && ('ssl_key_password' in self[s]))`,message=`section [oslo_messaging_amqp] holds an option Glance marks secret (ssl_key_password): extraConfig is rendered into a plain ConfigMap; put it in an INI file in a Secret of your own, mount that into the glance-api container and add --config-dir for its folder to the container's args`
	// +kubebuilder:validation:XValidation:rule=`!self.exists(s, s.lowerAscii() == 'oslo_messaging_notifications' && ('transport_url' in self[s]))`,message=`section [oslo_messaging_notifications] holds an option Glance marks secret (transport_url): extraConfig is rendered into a plain ConfigMap; put it in an INI file in a Secret of your own, mount that into the glance-api container and add --config-dir for its folder to the container's args`
	// +kubebuilder:validation:XValidation:rule=`!self.exists(s, s.lowerAscii() == 'profiler' && ('hmac_keys' in self[s]))`,message=`section [profiler] holds an option Glance marks secret (hmac_keys): extraConfig is rendered into a plain ConfigMap; put it in an INI file in a Secret of your own, mount that into the glance-api container and add --config-dir for its folder to the container's args`
	// +kubebuilder:validation:XValidation:rule=`!self.exists(s, s.lowerAscii() == 'vault' && ('approle_role_id' in self[s] || 'approle_secret_id' in self[s] || 'root_token_id' in self[s]))`,message=`section [vault] holds an option Glance marks secret (approle_role_id, approle_secret_id, root_token_id): extraConfig is rendered into a plain ConfigMap; put it in an INI file in a Secret of your own, mount that into the glance-api container and add --config-dir for its folder to the container's args`
	ExtraConfig map[string]ConfigSection `json:"extraConfig,omitempty"`

	// TargetClusterRef names the registered cluster the Glance runs on, when
	// it is not the cluster holding this object.
	// +optional
	TargetClusterRef *ClusterRefSpec `json:"targetClusterRef,omitempty"`

	// APIs are the Image APIs of this Glance (glance-krm's extension): each
	// gets its own workload, replicas and, optionally, subset of stores.
	// Unset, the Glance has one API named "default" with every store. An
	// empty list is refused: the last API cannot be removed.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=8
	APIs []GlanceAPISpec `json:"apis,omitempty"`

	// CatalogAPI names the API that the stable Service (named like the
	// Glance, the one the Keystone catalog points at) selects; defaults
	// to "default".
	// +optional
	// +kubebuilder:validation:MaxLength=12
	CatalogAPI string `json:"catalogAPI,omitempty"`

	// ImageSignatureVerification turns on Glance's image signature
	// verification through barbican (glance-krm's extension).
	// +optional
	ImageSignatureVerification *ImageSignatureVerificationSpec `json:"imageSignatureVerification,omitempty"`

	// MetadefWrites is who may create, update and delete metadata
	// definitions: AdminOnly (the default, Glance's own) refuses a policy
	// override that opens one of those rules to non-admins, naming the
	// rule; PolicyOverrides lets the overrides decide and warns.
	// +optional
	// +kubebuilder:validation:Enum=AdminOnly;PolicyOverrides
	MetadefWrites string `json:"metadefWrites,omitempty"`
}

// ConfigSection is one glance-api.conf section: option -> value.
// +kubebuilder:validation:MaxProperties=64
// +kubebuilder:validation:XValidation:rule=`self.all(k, !k.contains('\n') && !k.contains('\r'))`,message=`option name must not contain a newline or carriage return (INI injection guard)`
// +kubebuilder:validation:XValidation:rule="self.all(k, size(k) <= 256)",message="option name must be at most 256 characters"
// +kubebuilder:validation:XValidation:rule=`self.all(k, k.matches('^[A-Za-z0-9_.-]+$'))`,message=`option name must match ^[A-Za-z0-9_.-]+$`
// +kubebuilder:validation:XValidation:rule=`self.all(k, !self[k].contains('\n') && !self[k].contains('\r'))`,message=`value must not contain a newline or carriage return (INI injection guard)`
type ConfigSection map[string]OptionValue

// ImageSpec is a container image: a repository and exactly one of tag or
// digest.
// +kubebuilder:validation:XValidation:rule="has(self.tag) != has(self.digest)",message="exactly one of spec.image.tag and spec.image.digest must be set"
type ImageSpec struct {
	// Repository is the image repository, for example ghcr.io/c5c3/glance.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:Pattern=`^[a-z0-9]+([._:/-][a-z0-9]+)*$`
	Repository string `json:"repository"`
	// Tag is the image tag.
	// +optional
	// +kubebuilder:validation:Pattern=`^[a-zA-Z0-9_][a-zA-Z0-9._-]{0,127}$`
	Tag string `json:"tag,omitempty"`
	// Digest is the image digest (sha256:<64 hex>).
	// +optional
	// +kubebuilder:validation:Pattern=`^sha256:[a-f0-9]{64}$`
	Digest string `json:"digest,omitempty"`
}

// GlanceStatus is written by the runtime controller.
type GlanceStatus struct {
	// ObservedGeneration is the generation the conditions describe.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions carry Ready, the aggregate of BackendsReady, DatabaseReady
	// and StoresDrained (each when written), and, while Ready is False,
	// Stalled (a failure a change must fix) or Reconciling (work in
	// progress).
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// Endpoint is the Image API's URL, as the seed operator writes it:
	// https://<spec.gateway.hostname>/ with a gateway, else the stable
	// Service's in-cluster URL. glance-krm's controller writes it while
	// the function's generated workload serves the Glance.
	// +optional
	Endpoint string `json:"endpoint,omitempty"`
	// InstalledRelease is the release the database schema was last
	// migrated to, as the Glance's completed glance-manage Jobs say (it
	// only moves forward).
	// +optional
	InstalledRelease string `json:"installedRelease,omitempty"`
	// TargetRelease and UpgradePhase are the seed operator's runtime
	// status; glance-krm's controller leaves them alone.
	// +optional
	TargetRelease string `json:"targetRelease,omitempty"`
	// +optional
	// +kubebuilder:validation:Enum=Expanding;Migrating;RollingUpdate;Contracting
	UpgradePhase string `json:"upgradePhase,omitempty"`
}

// GlanceList is a list of Glance.
// +kubebuilder:object:root=true
type GlanceList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Glance `json:"items"`
}
