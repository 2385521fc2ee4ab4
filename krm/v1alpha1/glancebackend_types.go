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
type S3BackendSpec struct {
	// Host is the S3 endpoint URL (s3_store_host).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:Pattern=`^https?://`
	Host string `json:"host"`

	// Bucket is the bucket images are stored in (s3_store_bucket).
	// +kubebuilder:validation:MinLength=1
	Bucket string `json:"bucket"`

	// CredentialsSecretRef names the Secret holding the S3 credentials under
	// the fixed data keys access-key-id and secret-access-key
	// (s3_store_access_key / s3_store_secret_key, delivered as environment
	// variables, never rendered into a file).
	CredentialsSecretRef SecretNameRefSpec `json:"credentialsSecretRef"`

	// BucketURLFormat is path (https://host/bucket) or virtual
	// (https://bucket.host) (s3_store_bucket_url_format).
	// +optional
	// +kubebuilder:validation:Enum=path;virtual
	// +kubebuilder:default=path
	BucketURLFormat string `json:"bucketURLFormat,omitempty"`

	// Region is the S3 region the bucket lives in (s3_store_region_name).
	// +optional
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
	// +optional
	// +kubebuilder:validation:Minimum=1
	LargeObjectChunkSize *int32 `json:"largeObjectChunkSize,omitempty"`
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
