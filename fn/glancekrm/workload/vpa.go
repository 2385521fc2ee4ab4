package workload

import (
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	vpav1 "k8s.io/autoscaler/vertical-pod-autoscaler/pkg/apis/autoscaling.k8s.io/v1"
	"k8s.io/utils/ptr"

	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

// vpa sets the requests of one API's containers by
// spec.deployment.verticalAutoscaling, as the seed operator's does: one
// policy for every container ("*"), requests only, so the limits the
// Glance gives stay where it put them.
func vpa(g *v1alpha1.Glance, api v1alpha1.GlanceAPISpec) *vpav1.VerticalPodAutoscaler {
	v := g.Spec.Deployment.VerticalAutoscaling
	instance := instanceOf(g.Name, api.Name)
	return &vpav1.VerticalPodAutoscaler{
		TypeMeta:   metav1.TypeMeta{APIVersion: vpav1.SchemeGroupVersion.String(), Kind: "VerticalPodAutoscaler"},
		ObjectMeta: metav1.ObjectMeta{Name: instance, Namespace: g.Namespace, Labels: objectLabels(g.Name, api.Name, commonLabels(instance))},
		Spec: vpav1.VerticalPodAutoscalerSpec{
			TargetRef: &autoscalingv1.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: instance},
			UpdatePolicy: &vpav1.PodUpdatePolicy{
				UpdateMode:  ptr.To(vpav1.UpdateMode(v.UpdateMode)),
				MinReplicas: v.MinReplicas,
			},
			ResourcePolicy: &vpav1.PodResourcePolicy{ContainerPolicies: []vpav1.ContainerResourcePolicy{{
				ContainerName:       vpav1.DefaultContainerResourcePolicy,
				MinAllowed:          v.MinAllowed,
				MaxAllowed:          v.MaxAllowed,
				ControlledResources: &[]corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory},
				ControlledValues:    ptr.To(vpav1.ContainerControlledValuesRequestsOnly),
			}}},
		},
	}
}
