package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
)

// ServiceUserSpec is the Keystone service user.
type ServiceUserSpec struct {
	// Username of the service user.
	// +optional
	// +kubebuilder:default=glance
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	// +kubebuilder:validation:XValidation:rule=`!self.contains('\n') && !self.contains('\r')`,message=`must not contain a newline or carriage return (INI injection guard)`
	Username string `json:"username,omitempty"`
	// ProjectName is the service user's project.
	// +optional
	// +kubebuilder:default=service
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	// +kubebuilder:validation:XValidation:rule=`!self.contains('\n') && !self.contains('\r')`,message=`must not contain a newline or carriage return (INI injection guard)`
	ProjectName string `json:"projectName,omitempty"`
	// UserDomainName is the service user's domain.
	// +optional
	// +kubebuilder:default=Default
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	// +kubebuilder:validation:XValidation:rule=`!self.contains('\n') && !self.contains('\r')`,message=`must not contain a newline or carriage return (INI injection guard)`
	UserDomainName string `json:"userDomainName,omitempty"`
	// ProjectDomainName is the service project's domain.
	// +optional
	// +kubebuilder:default=Default
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	// +kubebuilder:validation:XValidation:rule=`!self.contains('\n') && !self.contains('\r')`,message=`must not contain a newline or carriage return (INI injection guard)`
	ProjectDomainName string `json:"projectDomainName,omitempty"`
	// SecretRef locates the service user's password, delivered to glance-api
	// as OS_KEYSTONE_AUTHTOKEN__PASSWORD and never rendered into a file.
	// The seed's schema requires it; it is not read while
	// applicationCredential is set.
	SecretRef PasswordSecretRefSpec `json:"secretRef"`
	// ApplicationCredential authenticates the service user with a Keystone
	// application credential instead of its password ([keystone_authtoken]
	// auth_type = v3applicationcredential): its id and secret come from a
	// Secret, delivered like every credential and never rendered. A
	// glance-krm extension, after RHOSO's glance-operator.
	// +optional
	ApplicationCredential *ApplicationCredentialSpec `json:"applicationCredential,omitempty"`
}

// ApplicationCredentialSpec names the Secret of the service user's
// application credential.
type ApplicationCredentialSpec struct {
	// SecretRef is the Secret holding the credential's id and secret.
	SecretRef ApplicationCredentialSecretRef `json:"secretRef"`
}

// ApplicationCredentialSecretRef is a Secret in the same namespace and
// the keys of an application credential's id and secret in it (AC_ID and
// AC_SECRET by default, as RHOSO's keystone-operator writes them).
type ApplicationCredentialSecretRef struct {
	// Name of the Secret.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Name string `json:"name"`
	// IDKey is the key of the credential's id.
	// +optional
	// +kubebuilder:default=AC_ID
	// +kubebuilder:validation:MinLength=1
	IDKey string `json:"idKey,omitempty"`
	// SecretKey is the key of the credential's secret.
	// +optional
	// +kubebuilder:default=AC_SECRET
	// +kubebuilder:validation:MinLength=1
	SecretKey string `json:"secretKey,omitempty"`
}

// PasswordSecretRefSpec is a key of a Secret in the same namespace that holds
// a password.
type PasswordSecretRefSpec struct {
	// Name of the Secret.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Name string `json:"name"`
	// Key of the password in the Secret.
	// +optional
	// +kubebuilder:default=password
	// +kubebuilder:validation:MinLength=1
	Key string `json:"key,omitempty"`
}

// DatabaseSpec locates the database.
// +kubebuilder:validation:XValidation:rule="has(self.clusterRef) != has(self.host)",message="exactly one of clusterRef or host must be set"
// +kubebuilder:validation:XValidation:rule="!has(self.credentialsMode) || self.credentialsMode != 'Dynamic' || has(self.clusterRef)",message="credentialsMode Dynamic requires clusterRef (managed mode)"
type DatabaseSpec struct {
	// ClusterRef names the managed MariaDB; the host is
	// <name>.<namespace>.svc.
	// +optional
	ClusterRef *corev1.LocalObjectReference `json:"clusterRef,omitempty"`
	// CredentialsMode is Static (username is the Glance's name) or Dynamic
	// (username from the Secret), managed mode only.
	// +optional
	// +kubebuilder:validation:Enum=Static;Dynamic
	CredentialsMode string `json:"credentialsMode,omitempty"`
	// Host of an existing database server (username from the Secret).
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:Pattern=`^[a-zA-Z0-9._:-]+$`
	Host string `json:"host,omitempty"`
	// Port of the server (3306 when unset).
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	Port int32 `json:"port,omitempty"`
	// Database is the schema name.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9_]+$`
	Database string `json:"database"`
	// SecretRef names the Secret with the password (key password) and,
	// outside Static managed mode, the username (key username).
	SecretRef SecretRefSpec `json:"secretRef"`
	// TLS to the database.
	// +optional
	TLS *DatabaseTLSSpec `json:"tls,omitempty"`
	// Replicas of a managed cluster (seed operator runtime; not rendered).
	// +optional
	// +kubebuilder:default=3
	// +kubebuilder:validation:Minimum=1
	Replicas int32 `json:"replicas,omitempty"`
	// StorageSize of a managed cluster (seed operator runtime; not
	// rendered).
	// +optional
	// +kubebuilder:default="100Gi"
	// +kubebuilder:validation:Pattern=`^[0-9]+(Mi|Gi|Ti)$`
	StorageSize string `json:"storageSize,omitempty"`
}

// DatabaseTLSSpec turns on TLS to the database.
type DatabaseTLSSpec struct {
	// Mode is disabled, prefer, require, verify-ca or verify-full.
	// +kubebuilder:validation:Enum=disabled;prefer;require;verify-ca;verify-full
	// +optional
	Mode string `json:"mode,omitempty"`
	// CABundleSecretRef is the Secret with the server CA (ca.crt).
	CABundleSecretRef SecretRefSpec `json:"caBundleSecretRef"`
	// ClientCertSecretRef is the Secret with the client keypair (tls.crt,
	// tls.key).
	ClientCertSecretRef SecretRefSpec `json:"clientCertSecretRef"`
}

// SecretRefSpec names a Secret in the same namespace.
type SecretRefSpec struct {
	// Name of the Secret.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Name string `json:"name"`
	// Key in the Secret.
	// +optional
	Key string `json:"key,omitempty"`
}

// CacheSpec is the memcached cache: a managed cluster (clusterRef,
// <name>:11211) or servers.
// +kubebuilder:validation:XValidation:rule="has(self.clusterRef) != (has(self.servers) && size(self.servers) > 0)",message="exactly one of clusterRef or servers must be set"
// +kubebuilder:validation:XValidation:rule="!has(self.clusterRef) || !self.clusterRef.name.matches('[\\n\\r]')",message="clusterRef.name must not contain a newline or carriage return"
type CacheSpec struct {
	// ClusterRef names the managed memcached.
	// +optional
	ClusterRef *corev1.LocalObjectReference `json:"clusterRef,omitempty"`
	// Backend is the oslo.cache backend.
	// +optional
	// +kubebuilder:default="dogpile.cache.pymemcache"
	Backend string `json:"backend,omitempty"`
	// Servers are memcached host:port addresses.
	// +optional
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:Pattern=`^(inet6:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?):[0-9]{1,5}$`
	Servers []string `json:"servers,omitempty"`
	// Replicas of a managed cluster (seed operator runtime; not rendered).
	// +optional
	// +kubebuilder:default=3
	// +kubebuilder:validation:Minimum=1
	Replicas int32 `json:"replicas,omitempty"`
}

// ClusterRefSpec names a registered target cluster.
type ClusterRefSpec struct {
	// Name of the registered cluster.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Name string `json:"name"`
}
