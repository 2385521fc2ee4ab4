package workload

import (
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

// service is a Service on the API port selecting one API's pods: the
// stable one named like the Glance selects the catalog API; with
// spec.apis each API also gets its own, <glance>-<api>.
func service(g *v1alpha1.Glance, name, api, selectAPI string) *corev1.Service {
	selector := selectorLabels(instanceOf(g.Name, selectAPI))
	selector[labelAppComponent] = componentAPI
	return &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: g.Namespace, Labels: objectLabels(g.Name, api, commonLabels(g.Name))},
		Spec: corev1.ServiceSpec{
			Selector: selector,
			Ports:    []corev1.ServicePort{{Port: v1alpha1.APIPort, TargetPort: intstr.FromInt32(v1alpha1.APIPort), Protocol: corev1.ProtocolTCP}},
		},
	}
}

// pdb keeps one API available through voluntary disruptions: at least one
// pod with several replicas, at most one down with one. Job pods (the
// db-purge runs share the default API's instance label) are left out.
func pdb(g *v1alpha1.Glance, api v1alpha1.GlanceAPISpec) *policyv1.PodDisruptionBudget {
	instance := instanceOf(g.Name, api.Name)
	p := &policyv1.PodDisruptionBudget{
		TypeMeta:   metav1.TypeMeta{APIVersion: "policy/v1", Kind: "PodDisruptionBudget"},
		ObjectMeta: metav1.ObjectMeta{Name: instance, Namespace: g.Namespace, Labels: objectLabels(g.Name, api.Name, commonLabels(instance))},
		Spec: policyv1.PodDisruptionBudgetSpec{Selector: &metav1.LabelSelector{
			MatchLabels:      selectorLabels(instance),
			MatchExpressions: []metav1.LabelSelectorRequirement{{Key: labelJobName, Operator: metav1.LabelSelectorOpDoesNotExist}},
		}},
	}
	if effectiveReplicas(&g.Spec, api) > 1 {
		p.Spec.MinAvailable = ptr.To(intstr.FromInt32(1))
	} else {
		p.Spec.MaxUnavailable = ptr.To(intstr.FromInt32(1))
	}
	return p
}

// hpa scales one API's Deployment by spec.autoscaling.
func hpa(g *v1alpha1.Glance, api v1alpha1.GlanceAPISpec) *autoscalingv2.HorizontalPodAutoscaler {
	a := g.Spec.Autoscaling
	instance := instanceOf(g.Name, api.Name)
	h := &autoscalingv2.HorizontalPodAutoscaler{
		TypeMeta:   metav1.TypeMeta{APIVersion: "autoscaling/v2", Kind: "HorizontalPodAutoscaler"},
		ObjectMeta: metav1.ObjectMeta{Name: instance, Namespace: g.Namespace, Labels: objectLabels(g.Name, api.Name, commonLabels(instance))},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: instance},
			MinReplicas:    ptr.To(ptr.Deref(a.MinReplicas, effectiveReplicas(&g.Spec, api))),
			MaxReplicas:    a.MaxReplicas,
			Behavior:       a.Behavior.DeepCopy(),
		},
	}
	for _, m := range []struct {
		name   corev1.ResourceName
		target *int32
	}{{corev1.ResourceCPU, a.TargetCPUUtilization}, {corev1.ResourceMemory, a.TargetMemoryUtilization}} {
		if m.target == nil {
			continue
		}
		h.Spec.Metrics = append(h.Spec.Metrics, autoscalingv2.MetricSpec{
			Type: autoscalingv2.ResourceMetricSourceType,
			Resource: &autoscalingv2.ResourceMetricSource{Name: m.name, Target: autoscalingv2.MetricTarget{
				Type: autoscalingv2.UtilizationMetricType, AverageUtilization: m.target}},
		})
	}
	return h
}
