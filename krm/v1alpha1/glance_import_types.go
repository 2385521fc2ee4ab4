package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Image import, staging, image cache and database purge: the seed
// operator's fields and defaults (C5C3/cobaltcore operators/glance at
// da0515f). Every default resolves at render time, not in the stored
// object, so an unset field keeps following the default.

// ImportFilteringSpec is [import_filtering_opts] for web-download imports.
// Unset lists resolve to https only, port 443, and a host denylist of
// loopback, the metadata service and the in-cluster API server; hosts you
// add are unioned onto that denylist; an explicitly empty list opts out.
// +kubebuilder:validation:XValidation:rule="!(has(self.allowedSchemes) && self.allowedSchemes.size() > 0 && has(self.disallowedSchemes) && self.disallowedSchemes.size() > 0)",message="allowedSchemes and disallowedSchemes are mutually exclusive: glance ignores the deny-list when the allow-list is non-empty"
// +kubebuilder:validation:XValidation:rule="!(has(self.allowedHosts) && self.allowedHosts.size() > 0 && has(self.disallowedHosts) && self.disallowedHosts.size() > 0)",message="allowedHosts and disallowedHosts are mutually exclusive: glance ignores the deny-list when the allow-list is non-empty"
// +kubebuilder:validation:XValidation:rule="!(has(self.allowedPorts) && self.allowedPorts.size() > 0 && has(self.disallowedPorts) && self.disallowedPorts.size() > 0)",message="allowedPorts and disallowedPorts are mutually exclusive: glance ignores the deny-list when the allow-list is non-empty"
type ImportFilteringSpec struct {
	// AllowedSchemes web-download may fetch from.
	// +optional
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:Enum=http;https
	AllowedSchemes []string `json:"allowedSchemes,omitempty"`

	// DisallowedSchemes web-download must refuse.
	// +optional
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:Enum=http;https
	DisallowedSchemes []string `json:"disallowedSchemes,omitempty"`

	// AllowedHosts web-download may fetch from (literal names).
	// +optional
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=253
	// +kubebuilder:validation:XValidation:rule=`self.all(h, !h.contains('\n') && !h.contains('\r') && !h.contains(',') && !h.contains('[') && !h.contains(']'))`,message=`host must not contain a newline, carriage return, comma or bracket: the rendered list is written verbatim`
	AllowedHosts []string `json:"allowedHosts,omitempty"`

	// DisallowedHosts web-download must refuse, on top of the default
	// denylist.
	// +optional
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=253
	// +kubebuilder:validation:XValidation:rule=`self.all(h, !h.contains('\n') && !h.contains('\r') && !h.contains(',') && !h.contains('[') && !h.contains(']'))`,message=`host must not contain a newline, carriage return, comma or bracket: the rendered list is written verbatim`
	DisallowedHosts []string `json:"disallowedHosts,omitempty"`

	// AllowedPorts web-download may connect to.
	// +optional
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:Minimum=1
	// +kubebuilder:validation:items:Maximum=65535
	AllowedPorts []int32 `json:"allowedPorts,omitempty"`

	// DisallowedPorts web-download must refuse.
	// +optional
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:Minimum=1
	// +kubebuilder:validation:items:Maximum=65535
	DisallowedPorts []int32 `json:"disallowedPorts,omitempty"`
}

// ImportPluginsSpec enables image-import plugins; a present block enables
// its plugin. They run in the fixed order decompression, conversion,
// inject_image_metadata.
type ImportPluginsSpec struct {
	// Decompression enables image_decompression; spec.staging must then say
	// its bound (sizeLimit or unbounded).
	// +optional
	Decompression *ImportDecompressionSpec `json:"decompression,omitempty"`

	// Conversion enables image_conversion.
	// +optional
	Conversion *ImportConversionSpec `json:"conversion,omitempty"`

	// InjectMetadata enables inject_image_metadata.
	// +optional
	InjectMetadata *ImportInjectMetadataSpec `json:"injectMetadata,omitempty"`
}

// ImportDecompressionSpec has no options: its presence enables the plugin.
type ImportDecompressionSpec struct{}

// ImportConversionSpec is [image_conversion].
type ImportConversionSpec struct {
	// OutputFormat of converted images (raw when unset).
	// +optional
	// +kubebuilder:validation:Enum=qcow2;raw;vmdk
	OutputFormat string `json:"outputFormat,omitempty"`
}

// ImportInjectMetadataSpec is [inject_metadata_properties].
type ImportInjectMetadataSpec struct {
	// Properties injected into every imported image (inject, key:value
	// pairs sorted by key).
	// +kubebuilder:validation:MinProperties=1
	// +kubebuilder:validation:MaxProperties=64
	// +kubebuilder:validation:XValidation:rule="self.all(k, size(k) <= 255 && size(self[k]) <= 255)",message="each injected property name and value must be at most 255 characters"
	Properties map[string]string `json:"properties"`

	// IgnoreUserRoles are exempt from injection ([admin] when unset; an
	// empty list injects for every role).
	// +optional
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=255
	// +kubebuilder:validation:XValidation:rule=`self.all(r, !r.contains(',') && !r.contains('\n') && !r.contains('\r'))`,message=`role must not contain a comma, newline or carriage return: the rendered ignore_user_roles list separates roles on commas`
	IgnoreUserRoles []string `json:"ignoreUserRoles,omitempty"`
}

// DBPurgeSpec tunes the glance-manage db purge CronJob (retention 30 days,
// schedule "1 0 * * *" when unset).
type DBPurgeSpec struct {
	// RetentionDays is --age_in_days.
	// +optional
	// +kubebuilder:validation:Minimum=1
	RetentionDays *int32 `json:"retentionDays,omitempty"`

	// Schedule is a cron expression or descriptor (@daily).
	// +optional
	Schedule string `json:"schedule,omitempty"`

	// PurgeImagesTable adds the db purge_images_table pass (OSSN-0075).
	// +optional
	PurgeImagesTable *bool `json:"purgeImagesTable,omitempty"`

	// Suspend pauses the CronJob.
	// +optional
	Suspend bool `json:"suspend,omitempty"`
}

// StagingSpec bounds the staging and tasks-work emptyDirs (10Gi each when
// unset).
// +kubebuilder:validation:XValidation:rule="!(has(self.unbounded) && self.unbounded && has(self.sizeLimit))",message="unbounded and sizeLimit are mutually exclusive: an unbounded staging area has no size limit to configure"
// +kubebuilder:validation:XValidation:rule="!has(self.sizeLimit) || quantity(string(self.sizeLimit)).compareTo(quantity('1Mi')) >= 0",message="staging.sizeLimit must be at least 1Mi"
type StagingSpec struct {
	// SizeLimit of each scratch emptyDir, at least 1Mi.
	// +optional
	SizeLimit *resource.Quantity `json:"sizeLimit,omitempty"`

	// Unbounded removes the bound.
	// +optional
	Unbounded bool `json:"unbounded,omitempty"`
}

// ImageCacheSpec enables the per-replica image cache (10Gi emptyDir,
// maintenance every 5m when unset).
// +kubebuilder:validation:XValidation:rule="!has(self.sizeLimit) || quantity(string(self.sizeLimit)).compareTo(quantity('1Mi')) >= 0",message="imageCache.sizeLimit must be at least 1Mi"
// +kubebuilder:validation:XValidation:rule="!has(self.maintenanceInterval) || duration(self.maintenanceInterval) >= duration('1m')",message="imageCache.maintenanceInterval must be at least 1m"
type ImageCacheSpec struct {
	// SizeLimit of the cache emptyDir; image_cache_max_size is 80% of it.
	// +optional
	SizeLimit *resource.Quantity `json:"sizeLimit,omitempty"`

	// MaintenanceInterval of the pruner and cleaner, at least 1m.
	// +optional
	MaintenanceInterval *metav1.Duration `json:"maintenanceInterval,omitempty"`

	// MaintenanceResources of the cache-maintenance container (a 25m CPU
	// request and 256Mi of memory as request and limit for what it leaves
	// unnamed, the seed's sidecar defaults).
	// +optional
	MaintenanceResources *corev1.ResourceRequirements `json:"maintenanceResources,omitempty"`
}
