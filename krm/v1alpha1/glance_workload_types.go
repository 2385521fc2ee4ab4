package v1alpha1

import (
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The fields in this file shape the glance-api workload rather than its
// configuration. They are the seed operator's (C5C3/cobaltcore
// operators/glance at da0515f), accepted with its schema so a seed CR stays
// valid. What the build does with each is listed in docs: today the
// function wires a workload the user wrote and records these for the
// workload generator; apiServer also shapes glance-api.conf and the uWSGI
// settings it renders.

// DeploymentSpec holds the pod-level knobs of the glance-api Deployment.
// +kubebuilder:validation:XValidation:rule="(has(self.preStopSleepSeconds) ? self.preStopSleepSeconds : 5) < (has(self.terminationGracePeriodSeconds) ? self.terminationGracePeriodSeconds : 30)",message="preStopSleepSeconds must be strictly less than terminationGracePeriodSeconds"
// +kubebuilder:validation:XValidation:rule="!has(self.strategy) || !has(self.strategy.type) || self.strategy.type != 'Recreate' || !has(self.strategy.rollingUpdate)",message="rollingUpdate must not be set when strategy.type is Recreate"
type DeploymentSpec struct {
	// Replicas is the number of glance-api pods.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:default=3
	Replicas int32 `json:"replicas,omitempty"`

	// Resources of the glance-api container. What it leaves unnamed
	// follows the seed's newer defaults when the workload is generated
	// (nothing is stored): a 70m CPU request and no CPU limit, and as
	// memory request and limit 16Mi plus, per API process, 1Gi and 32Mi
	// for each thread past the first.
	// +optional
	Resources *corev1.ResourceRequirements `json:"resources,omitempty"`

	// TerminationGracePeriodSeconds of the pods (Kubernetes' 30 when unset).
	// +optional
	// +kubebuilder:validation:Minimum=10
	TerminationGracePeriodSeconds *int64 `json:"terminationGracePeriodSeconds,omitempty"`

	// PreStopSleepSeconds is the preStop sleep (5 when unset, 0 disables).
	// +optional
	// +kubebuilder:validation:Minimum=0
	PreStopSleepSeconds *int64 `json:"preStopSleepSeconds,omitempty"`

	// Strategy of the Deployment (RollingUpdate maxUnavailable 0, maxSurge 1
	// when unset).
	// +optional
	Strategy *appsv1.DeploymentStrategy `json:"strategy,omitempty"`

	// TopologySpreadConstraints of the pods.
	// +optional
	TopologySpreadConstraints []corev1.TopologySpreadConstraint `json:"topologySpreadConstraints,omitempty"`

	// PriorityClassName of the pods.
	// +optional
	PriorityClassName *string `json:"priorityClassName,omitempty"`

	// NodePlacementSpec adds nodeSelector, tolerations and affinity,
	// rendered onto the pod template as written (the seed's newer
	// DeploymentSpec, C5C3/cobaltcore internal/common/types/workload.go
	// at 043a72e).
	NodePlacementSpec `json:",inline"`

	// VerticalAutoscaling asks for a VerticalPodAutoscaler per Image API
	// Deployment that sets the requests of its containers. It is refused
	// beside spec.autoscaling, which would scale the same Deployment on
	// the same resources.
	// +optional
	VerticalAutoscaling *VerticalAutoscalingSpec `json:"verticalAutoscaling,omitempty"`
}

// JobSpec configures every Job and CronJob pod of a Glance. Each field it
// leaves unset follows the API Deployment (spec.deployment): a nil
// priorityClassName takes the Deployment's and "" opts out; a nil
// nodeSelector or tolerations copies the Deployment's and an empty one
// opts out; a nil affinity copies only the Deployment's nodeAffinity (the
// pod (anti-)affinity terms target the API pods), an empty one opts out.
type JobSpec struct {
	// Resources of every container of the Job and CronJob pods, as
	// written.
	// +optional
	Resources *corev1.ResourceRequirements `json:"resources,omitempty"`

	// PriorityClassName of the Job and CronJob pods.
	// +optional
	PriorityClassName *string `json:"priorityClassName,omitempty"`

	NodePlacementSpec `json:",inline"`
}

// NodePlacementSpec picks the nodes a pod may run on. Every field is
// optional and rendered as written; none is defaulted.
type NodePlacementSpec struct {
	// NodeSelector restricts the pods to nodes carrying every label.
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`

	// Tolerations let the pods onto nodes with matching taints.
	// +optional
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`

	// Affinity holds node affinity and pod (anti-)affinity, applied beside
	// the topology spread constraints.
	// +optional
	Affinity *corev1.Affinity `json:"affinity,omitempty"`
}

// VerticalAutoscalingSpec asks for a VerticalPodAutoscaler that controls
// the requests (never the limits) of every container of the pods.
// +kubebuilder:validation:XValidation:rule="!has(self.minAllowed) || self.minAllowed.all(k, k in ['cpu','memory'])",message="minAllowed may only name cpu and memory"
// +kubebuilder:validation:XValidation:rule="!has(self.maxAllowed) || self.maxAllowed.all(k, k in ['cpu','memory'])",message="maxAllowed may only name cpu and memory"
type VerticalAutoscalingSpec struct {
	// UpdateMode is the VPA's spec.updatePolicy.updateMode: Off only
	// recommends, Initial sets requests when a pod is created, Recreate
	// and Auto evict pods to apply them, InPlaceOrRecreate resizes them in
	// place where it can.
	// +kubebuilder:validation:Enum=Off;Initial;Recreate;InPlaceOrRecreate;Auto
	UpdateMode string `json:"updateMode"`

	// MinReplicas is the VPA's spec.updatePolicy.minReplicas: the updater
	// evicts only while at least this many replicas run (2 when unset).
	// +optional
	// +kubebuilder:validation:Minimum=1
	MinReplicas *int32 `json:"minReplicas,omitempty"`

	// MinAllowed is the container policy's minAllowed.
	// +optional
	// +kubebuilder:validation:Type=object
	// +kubebuilder:validation:MaxProperties=2
	MinAllowed corev1.ResourceList `json:"minAllowed,omitempty"`

	// MaxAllowed is the container policy's maxAllowed.
	// +optional
	// +kubebuilder:validation:Type=object
	// +kubebuilder:validation:MaxProperties=2
	MaxAllowed corev1.ResourceList `json:"maxAllowed,omitempty"`
}

// APIServerSpec tunes the glance-api process: uwsgi from 2026.1, workers
// below it.
type APIServerSpec struct {
	// UWSGI settings, effective from 2026.1 (uWSGI launch mode).
	// +optional
	UWSGI *UWSGISpec `json:"uwsgi,omitempty"`

	// Workers is [DEFAULT] workers, effective below 2026.1 (eventlet); 2
	// when unset there.
	// +optional
	// +kubebuilder:validation:Minimum=1
	Workers *int32 `json:"workers,omitempty"`
}

// UWSGISpec holds the uWSGI server settings.
// +kubebuilder:validation:XValidation:rule="!has(self.httpKeepAliveTimeout) || !has(self.httpKeepAlive) || self.httpKeepAlive",message="httpKeepAliveTimeout may only be set when httpKeepAlive is true"
type UWSGISpec struct {
	// Processes is the number of uWSGI worker processes.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:default=2
	// +optional
	Processes int32 `json:"processes,omitempty"`

	// Threads per process. Each image transfer and each probe holds one
	// for its whole length, so processes × threads is how many run at
	// once (16 when unset; the seed's 1 served two).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:default=16
	// +optional
	Threads int32 `json:"threads,omitempty"`

	// HTTPKeepAlive keeps client connections open. Off when unset (the
	// seed's on): uWSGI 2.0's HTTP router closes a keep-alive connection
	// after a request with a body, which fails the client's next request.
	// +optional
	HTTPKeepAlive *bool `json:"httpKeepAlive,omitempty"`

	// Harakiri kills a request running longer than this many seconds.
	// +optional
	// +kubebuilder:validation:Minimum=1
	Harakiri *int32 `json:"harakiri,omitempty"`

	// HTTPKeepAliveTimeout in seconds, when httpKeepAlive is on.
	// +optional
	// +kubebuilder:validation:Minimum=1
	HTTPKeepAliveTimeout *int32 `json:"httpKeepAliveTimeout,omitempty"`
}

// AutoscalingSpec asks for a HorizontalPodAutoscaler.
// +kubebuilder:validation:XValidation:rule="has(self.targetCPUUtilization) || has(self.targetMemoryUtilization)",message="at least one of targetCPUUtilization or targetMemoryUtilization must be set"
// +kubebuilder:validation:XValidation:rule="!has(self.minReplicas) || self.minReplicas <= self.maxReplicas",message="minReplicas must not exceed maxReplicas"
type AutoscalingSpec struct {
	// MinReplicas (spec.deployment.replicas when unset).
	// +optional
	// +kubebuilder:validation:Minimum=1
	MinReplicas *int32 `json:"minReplicas,omitempty"`

	// MaxReplicas is the upper bound.
	// +kubebuilder:validation:Minimum=1
	MaxReplicas int32 `json:"maxReplicas"`

	// TargetCPUUtilization in percent of the pod's summed CPU requests;
	// above 100 where a container may use more than it requests.
	// +optional
	// +kubebuilder:validation:Minimum=1
	TargetCPUUtilization *int32 `json:"targetCPUUtilization,omitempty"`

	// TargetMemoryUtilization in percent of the pod's summed memory
	// requests; above 100 where a container may use more than it requests.
	// +optional
	// +kubebuilder:validation:Minimum=1
	TargetMemoryUtilization *int32 `json:"targetMemoryUtilization,omitempty"`

	// Behavior is copied into the HPA's spec.behavior as written: how fast
	// it scales up and down (Kubernetes' defaults for a direction left
	// unset). Its tolerance needs Kubernetes 1.33 or newer.
	// +optional
	Behavior *autoscalingv2.HorizontalPodAutoscalerBehavior `json:"behavior,omitempty"`
}

// NetworkPolicySpec asks for a NetworkPolicy around the glance-api pods.
// +kubebuilder:validation:XValidation:rule="size(self.ingress) > 0",message="at least one ingress source must be specified"
type NetworkPolicySpec struct {
	// Ingress lists who may reach the API.
	Ingress []NetworkPolicyIngressSource `json:"ingress"`

	// AdditionalEgress is egress beyond what the operator allows itself.
	// +optional
	AdditionalEgress []networkingv1.NetworkPolicyEgressRule `json:"additionalEgress,omitempty"`
}

// NetworkPolicyIngressSource is one allowed ingress peer.
type NetworkPolicyIngressSource struct {
	// NamespaceSelector selects the peer namespaces.
	NamespaceSelector metav1.LabelSelector `json:"namespaceSelector"`

	// PodSelector narrows the peers within them.
	// +optional
	PodSelector *metav1.LabelSelector `json:"podSelector,omitempty"`
}

// GatewaySpec asks for a Gateway API HTTPRoute to the glance-api Service.
type GatewaySpec struct {
	// ParentRef is the Gateway the route attaches to.
	ParentRef GatewayParentRefSpec `json:"parentRef"`

	// Hostname the route matches.
	// +kubebuilder:validation:MinLength=1
	Hostname string `json:"hostname"`

	// Path prefix the route matches.
	// +optional
	Path string `json:"path,omitempty"`

	// Annotations for the HTTPRoute.
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
}

// GatewayParentRefSpec names a Gateway.
type GatewayParentRefSpec struct {
	// Name of the Gateway.
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`

	// Namespace of the Gateway (the Glance's when unset).
	// +optional
	Namespace string `json:"namespace,omitempty"`

	// SectionName is the Gateway listener.
	// +optional
	SectionName string `json:"sectionName,omitempty"`
}
