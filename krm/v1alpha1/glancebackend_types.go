package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// GlanceBackendType is the store driver. Phase 1 supports S3 only; the File
// store is never supported because every Glance replica must read and write
// the same images.
// +kubebuilder:validation:Enum=S3
type GlanceBackendType string

const GlanceBackendTypeS3 GlanceBackendType = "S3"

// OptionValue is one free-form oslo.config option value. The length bound is
// what lets the API server price the CEL rules over extraOptions within its
// cost budget.
// +kubebuilder:validation:MaxLength=1024
type OptionValue string

// GlanceBackend attaches one image store to a Glance. Its metadata.name is
// the Glance store identifier: the [<name>] section of backends.conf and the
// <name>:s3 entry of [DEFAULT] enabled_backends.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=openstack
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=='Ready')].status`
// +kubebuilder:printcolumn:name="Type",type=string,JSONPath=`.spec.type`
// +kubebuilder:printcolumn:name="Default",type=boolean,JSONPath=`.spec.isDefault`
// +kubebuilder:printcolumn:name="Glance",type=string,JSONPath=`.spec.glanceRef.name`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule=`!(self.metadata.name.lowerAscii() in ['default', 'database', 'keystone_authtoken', 'glance_store', 'paste_deploy', 'oslo_policy', 'os_glance_staging_store', 'os_glance_tasks_store'])`,message=`reserved or operator-managed Glance store section: the name becomes the [<name>] config section and must not be default, database, keystone_authtoken, glance_store, paste_deploy, oslo_policy, os_glance_staging_store or os_glance_tasks_store`
// +kubebuilder:validation:XValidation:rule=`!self.metadata.name.lowerAscii().startsWith('os_glance_') && !self.metadata.name.lowerAscii().startsWith('os-glance-')`,message=`name uses the reserved os_glance_ / os-glance- prefix (Glance owns it for its staging and tasks stores)`
type GlanceBackend struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec describes the image store.
	Spec GlanceBackendSpec `json:"spec"`
	// Status is written by the runtime controller only.
	// +optional
	Status GlanceBackendStatus `json:"status,omitempty"`
}

// GlanceBackendSpec describes one image store of a Glance.
// +kubebuilder:validation:XValidation:rule="(self.type == 'S3') == has(self.s3)",message="spec.s3 must be set exactly when spec.type is S3"
// +kubebuilder:validation:XValidation:rule="!(has(self.s3) && has(self.s3.caBundleRef) && has(self.extraOptions) && 's3_store_cacert' in self.extraOptions)",message="s3_store_cacert is set by spec.s3.caBundleRef: set the CA bundle in one place"
type GlanceBackendSpec struct {
	// GlanceRef names the Glance in the same namespace this store attaches
	// to. Immutable: re-pointing a backend would strand the old deployment's
	// store; delete and recreate instead. The Glance need not exist yet.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.glanceRef is immutable; delete and recreate the GlanceBackend instead"
	GlanceRef GlanceRefSpec `json:"glanceRef"`

	// Type is the store driver; only S3 is supported. Immutable.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.type is immutable"
	Type GlanceBackendType `json:"type"`

	// S3 is the S3-compatible object store. Required exactly when type is S3.
	// +optional
	S3 *S3BackendSpec `json:"s3,omitempty"`

	// IsDefault marks this backend the Glance default store
	// ([glance_store] default_backend). Exactly one backend attached to a
	// Glance must be the default.
	// +optional
	// +kubebuilder:default=false
	IsDefault bool `json:"isDefault,omitempty"`

	// ExtraOptions are free-form [<name>] store-section options not covered
	// by the typed fields, keyed by bare option name. Keys the typed fields
	// own, and store_description, are refused.
	// +optional
	// +kubebuilder:validation:MaxProperties=32
	// +kubebuilder:validation:XValidation:rule="self.all(k, size(k) <= 256)",message="option name must be at most 256 characters"
	// +kubebuilder:validation:XValidation:rule=`self.all(k, k.matches('^[A-Za-z0-9_]+$'))`,message=`option name must match ^[A-Za-z0-9_]+$ (letters, digits, underscore)`
	// +kubebuilder:validation:XValidation:rule=`self.all(k, !self[k].contains('\n') && !self[k].contains('\r'))`,message=`value must not contain a newline or carriage return (INI injection guard)`
	// +kubebuilder:validation:XValidation:rule=`!('s3_store_access_key' in self)`,message=`option "s3_store_access_key" is owned by spec.s3.credentialsSecretRef`
	// +kubebuilder:validation:XValidation:rule=`!('s3_store_bucket' in self)`,message=`option "s3_store_bucket" is owned by spec.s3.bucket`
	// +kubebuilder:validation:XValidation:rule=`!('s3_store_bucket_url_format' in self)`,message=`option "s3_store_bucket_url_format" is owned by spec.s3.bucketURLFormat`
	// +kubebuilder:validation:XValidation:rule=`!('s3_store_create_bucket_on_put' in self)`,message=`option "s3_store_create_bucket_on_put" is owned by spec.s3.createBucketOnPut`
	// +kubebuilder:validation:XValidation:rule=`!('s3_store_host' in self)`,message=`option "s3_store_host" is owned by spec.s3.host`
	// +kubebuilder:validation:XValidation:rule=`!('s3_store_large_object_chunk_size' in self)`,message=`option "s3_store_large_object_chunk_size" is owned by spec.s3.largeObjectChunkSize`
	// +kubebuilder:validation:XValidation:rule=`!('s3_store_large_object_size' in self)`,message=`option "s3_store_large_object_size" is owned by spec.s3.largeObjectSize`
	// +kubebuilder:validation:XValidation:rule=`!('s3_store_region_name' in self)`,message=`option "s3_store_region_name" is owned by spec.s3.region`
	// +kubebuilder:validation:XValidation:rule=`!('s3_store_secret_key' in self)`,message=`option "s3_store_secret_key" is owned by spec.s3.credentialsSecretRef`
	// +kubebuilder:validation:XValidation:rule=`!('store_description' in self)`,message=`option "store_description" is owned by glance-krm (operator-owned; it names the GlanceBackend and its bucket)`
	ExtraOptions map[string]OptionValue `json:"extraOptions,omitempty"`
}

// GlanceRefSpec names a Glance in the same namespace.
type GlanceRefSpec struct {
	// Name of the referenced Glance.
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
}

// S3BackendSpec is an S3-compatible object store. Optional fields are
// rendered only when set, so upstream Glance defaults apply otherwise.
// +kubebuilder:validation:XValidation:rule=`!has(self.bucketURLFormat) || self.bucketURLFormat != 'virtual' || self.bucket.matches('^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$')`,message=`with bucketURLFormat virtual the bucket becomes a host name label (<bucket>.<host>): it must be a DNS label (lower-case letters, digits and '-', at most 63, no dots)`
type S3BackendSpec struct {
	// Host is the S3 endpoint URL (s3_store_host).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:Pattern=`^https?://`
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule=`!self.contains('\n') && !self.contains('\r')`,message=`must not contain a newline or carriage return (INI injection guard)`
	// +kubebuilder:validation:XValidation:rule=`!self.matches('^https?://[^/?#]*@')`,message=`must not carry userinfo (user:password@): the S3 credentials come from spec.s3.credentialsSecretRef, and glance_store writes the host into every image's location URL`
	// +kubebuilder:validation:XValidation:rule=`!self.contains('?') && !self.contains('#')`,message=`must not contain a query (?) or a fragment (#): glance_store builds each image's location URL from the host, and a ? or # there breaks parsing it`
	// +kubebuilder:validation:XValidation:rule=`!self.contains(' ') && !self.contains('\t')`,message=`must not contain a space or a tab`
	Host string `json:"host"`

	// Bucket is the bucket images are stored in (s3_store_bucket).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	// +kubebuilder:validation:XValidation:rule=`!self.contains('\n') && !self.contains('\r')`,message=`must not contain a newline or carriage return (INI injection guard)`
	Bucket string `json:"bucket"`

	// CredentialsSecretRef names the Secret holding the S3 credentials under
	// the fixed data keys access-key-id and secret-access-key
	// (s3_store_access_key / s3_store_secret_key, delivered by the
	// credentials init container, never rendered into the build).
	CredentialsSecretRef SecretNameRefSpec `json:"credentialsSecretRef"`

	// CABundleRef names a ConfigMap or Secret key holding the PEM CA bundle
	// that signs the S3 endpoint's certificate (a private CA). glance-krm
	// mounts it into the glance-api pod and points s3_store_cacert at it;
	// glance_store reads s3_store_cacert from 2025.1 on. A glance-krm
	// extension: optional, so the seed's CRs stay valid.
	// +optional
	CABundleRef *CABundleRefSpec `json:"caBundleRef,omitempty"`

	// BucketURLFormat is path (https://host/bucket) or virtual
	// (https://bucket.host) (s3_store_bucket_url_format).
	// +optional
	// +kubebuilder:validation:Enum=path;virtual
	// +kubebuilder:default=path
	BucketURLFormat string `json:"bucketURLFormat,omitempty"`

	// Region is the S3 region the bucket lives in (s3_store_region_name).
	// +optional
	// +kubebuilder:validation:MaxLength=128
	// +kubebuilder:validation:XValidation:rule=`!self.contains('\n') && !self.contains('\r')`,message=`must not contain a newline or carriage return (INI injection guard)`
	Region string `json:"region,omitempty"`

	// CreateBucketOnPut creates the bucket on first write
	// (s3_store_create_bucket_on_put); rendered only when true.
	// +optional
	CreateBucketOnPut bool `json:"createBucketOnPut,omitempty"`

	// LargeObjectSize is the multipart-upload threshold in MiB
	// (s3_store_large_object_size); rendered only when set.
	// +optional
	// +kubebuilder:validation:Minimum=1
	LargeObjectSize *int32 `json:"largeObjectSize,omitempty"`

	// LargeObjectChunkSize is the multipart chunk size in MiB
	// (s3_store_large_object_chunk_size); rendered only when set.
	// The seed's schema minimum (1) is kept so that its CRs decode the same;
	// glance_store refuses anything below 5 in every release.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:XValidation:rule="self >= 5",message="must be at least 5 (MiB): S3 refuses smaller multipart parts, and glance_store disables a store whose s3_store_large_object_chunk_size is below 5 (BadStoreConfiguration)"
	LargeObjectChunkSize *int32 `json:"largeObjectChunkSize,omitempty"`
}

// CABundleRefSpec is a key of a ConfigMap or Secret in the same namespace.
type CABundleRefSpec struct {
	// Kind of the object: ConfigMap or Secret.
	// +kubebuilder:validation:Enum=ConfigMap;Secret
	Kind string `json:"kind"`
	// Name of the object.
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
	// Key of the PEM bundle in the object.
	// +optional
	// +kubebuilder:default=ca.crt
	// +kubebuilder:validation:MinLength=1
	Key string `json:"key,omitempty"`
}

// SecretNameRefSpec names a Secret in the same namespace. It carries no key:
// the data keys are fixed by contract.
type SecretNameRefSpec struct {
	// Name of the referenced Secret.
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
}

// GlanceBackendStatus is written by the runtime controller.
type GlanceBackendStatus struct {
	// ObservedGeneration is the generation the conditions describe.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions are CredentialsReady, ConfigProjected and Ready.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// GlanceBackendList is a list of GlanceBackend.
// +kubebuilder:object:root=true
type GlanceBackendList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []GlanceBackend `json:"items"`
}
