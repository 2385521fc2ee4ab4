package v1alpha1

import (
	"strings"
	"testing"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

// Each of the seed's newer workload rules refuses its case and names the
// field; a spec within them passes.
func TestWorkloadRules(t *testing.T) {
	res := func(req, limit string) *corev1.ResourceRequirements {
		r := &corev1.ResourceRequirements{Requests: corev1.ResourceList{}, Limits: corev1.ResourceList{}}
		if req != "" {
			r.Requests[corev1.ResourceMemory] = resource.MustParse(req)
		}
		if limit != "" {
			r.Limits[corev1.ResourceMemory] = resource.MustParse(limit)
		}
		return r
	}
	memTarget := func(p int32) *AutoscalingSpec {
		return &AutoscalingSpec{MaxReplicas: 3, TargetMemoryUtilization: ptr.To(p)}
	}
	rules := func(r autoscalingv2.HPAScalingRules) *AutoscalingSpec {
		return &AutoscalingSpec{MaxReplicas: 3, TargetCPUUtilization: ptr.To(int32(80)),
			Behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleDown: &r}}
	}
	for name, c := range map[string]struct {
		spec       GlanceSpec
		path, want string
	}{
		"a node selector key that is no label key": {GlanceSpec{Deployment: DeploymentSpec{NodePlacementSpec: NodePlacementSpec{NodeSelector: map[string]string{"bad key": "x"}}}},
			"spec.deployment.nodeSelector", "name part must consist of"},
		"a node selector value that is no label value": {GlanceSpec{Jobs: &JobSpec{NodePlacementSpec: NodePlacementSpec{NodeSelector: map[string]string{"disk": "a b"}}}},
			"spec.jobs.nodeSelector[disk]", "a valid label must be"},
		"Equal without a key": {GlanceSpec{Deployment: DeploymentSpec{NodePlacementSpec: NodePlacementSpec{Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpEqual, Value: "x"}}}}},
			"spec.deployment.tolerations[0].operator", MsgTolerationEmptyKey},
		"tolerationSeconds without NoExecute": {GlanceSpec{Deployment: DeploymentSpec{NodePlacementSpec: NodePlacementSpec{Tolerations: []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule, TolerationSeconds: ptr.To(int64(5))}}}}},
			"spec.deployment.tolerations[0].effect", MsgTolerationSeconds},
		"Exists with a value": {GlanceSpec{Jobs: &JobSpec{NodePlacementSpec: NodePlacementSpec{Tolerations: []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpExists, Value: "v"}}}}},
			"spec.jobs.tolerations[0].value", MsgTolerationExists},
		"Gt with no integer": {GlanceSpec{Deployment: DeploymentSpec{NodePlacementSpec: NodePlacementSpec{Tolerations: []corev1.Toleration{{Key: "k", Operator: "Gt", Value: "many"}}}}},
			"spec.deployment.tolerations[0].value", MsgTolerationInteger},
		"an unknown operator": {GlanceSpec{Deployment: DeploymentSpec{NodePlacementSpec: NodePlacementSpec{Tolerations: []corev1.Toleration{{Key: "k", Operator: "In"}}}}},
			"spec.deployment.tolerations[0].operator", "Unsupported value"},
		"a zero memory request under a memory target": {GlanceSpec{Autoscaling: memTarget(80), Deployment: DeploymentSpec{Resources: res("0", "")}},
			"spec.deployment.resources.requests.memory", "memory request must be greater than zero while targetMemoryUtilization is set"},
		"a zero memory limit, no request, under a memory target": {GlanceSpec{Autoscaling: memTarget(80), Deployment: DeploymentSpec{Resources: res("", "0")}},
			"spec.deployment.resources.limits.memory", "without a request the API server copies the limit into the request"},
		"a memory target the limit keeps out of reach": {GlanceSpec{Autoscaling: memTarget(150), Deployment: DeploymentSpec{Resources: res("1Gi", "1Gi")}},
			"spec.autoscaling.targetMemoryUtilization", "targetMemoryUtilization 150 can never be reached: no container of the API pod can use more than 100% of its memory request"},
		"a memory target above 100 over the default memory, request and limit alike (the seed's invalid-cr 36)": {GlanceSpec{Autoscaling: memTarget(150)},
			"spec.autoscaling.targetMemoryUtilization", "can use more than 100% of its memory request"},
		"a memory target past every container's ceiling, the sidecar's included": {GlanceSpec{Autoscaling: memTarget(450), Deployment: DeploymentSpec{Resources: res("512Mi", "1Gi")},
			ImageCache: &ImageCacheSpec{MaintenanceResources: res("64Mi", "256Mi")}},
			"spec.autoscaling.targetMemoryUtilization", "more than 400% of its memory request"},
		"a zero cache-maintenance request under a memory target": {GlanceSpec{Autoscaling: memTarget(80), ImageCache: &ImageCacheSpec{MaintenanceResources: res("0", "")}},
			"spec.imageCache.maintenanceResources.requests.memory", "memory request must be greater than zero while targetMemoryUtilization is set"},
		"a stabilization window above 3600": {GlanceSpec{Autoscaling: rules(autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr.To(int32(3601))})},
			"spec.autoscaling.behavior.scaleDown.stabilizationWindowSeconds", MsgBehaviorWindow},
		"an unknown select policy": {GlanceSpec{Autoscaling: rules(autoscalingv2.HPAScalingRules{SelectPolicy: ptr.To(autoscalingv2.ScalingPolicySelect("Most"))})},
			"spec.autoscaling.behavior.scaleDown.selectPolicy", "Unsupported value"},
		"a negative tolerance": {GlanceSpec{Autoscaling: rules(autoscalingv2.HPAScalingRules{Tolerance: ptr.To(resource.MustParse("-50m"))})},
			"spec.autoscaling.behavior.scaleDown.tolerance", MsgBehaviorTolerance},
		"a policy of no value": {GlanceSpec{Autoscaling: rules(autoscalingv2.HPAScalingRules{Policies: []autoscalingv2.HPAScalingPolicy{{Type: autoscalingv2.PodsScalingPolicy, Value: 0, PeriodSeconds: 60}}})},
			"spec.autoscaling.behavior.scaleDown.policies[0].value", MsgBehaviorValue},
		"a policy period above 1800": {GlanceSpec{Autoscaling: rules(autoscalingv2.HPAScalingRules{Policies: []autoscalingv2.HPAScalingPolicy{{Type: autoscalingv2.PercentScalingPolicy, Value: 10, PeriodSeconds: 1801}}})},
			"spec.autoscaling.behavior.scaleDown.policies[0].periodSeconds", MsgBehaviorPeriod},
		"a policy of an unknown type": {GlanceSpec{Autoscaling: rules(autoscalingv2.HPAScalingRules{Policies: []autoscalingv2.HPAScalingPolicy{{Type: "Nodes", Value: 1, PeriodSeconds: 60}}})},
			"spec.autoscaling.behavior.scaleDown.policies[0].type", "Unsupported value"},
	} {
		t.Run(name, func(t *testing.T) {
			errs := validateWorkload(&c.spec, field.NewPath("spec"))
			if len(errs) != 1 || errs[0].Field != c.path || !strings.Contains(errs[0].Error(), c.want) {
				t.Errorf("got %v, want one error at %s saying %q", errs, c.path, c.want)
			}
		})
	}
	within := GlanceSpec{
		Autoscaling: &AutoscalingSpec{MaxReplicas: 3, TargetCPUUtilization: ptr.To(int32(400)), TargetMemoryUtilization: ptr.To(int32(200)),
			Behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleUp: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr.To(int32(0)),
				Policies: []autoscalingv2.HPAScalingPolicy{{Type: autoscalingv2.PodsScalingPolicy, Value: 2, PeriodSeconds: 1800}}}}},
		Deployment: DeploymentSpec{
			Resources: &corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("512Mi")},
				Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("1Gi")}},
			NodePlacementSpec: NodePlacementSpec{NodeSelector: map[string]string{"kubernetes.io/os": "linux"},
				Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}, {Key: "k", Operator: "Lt", Value: "10", Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To(int64(30))}}},
		},
	}
	if errs := validateWorkload(&within, field.NewPath("spec")); len(errs) > 0 {
		t.Errorf("a spec within every rule: %v", errs)
	}
	for name, s := range map[string]GlanceSpec{
		"a CPU target above 100 over the defaults (no CPU limit)": {Autoscaling: &AutoscalingSpec{MaxReplicas: 3, TargetCPUUtilization: ptr.To(int32(400))}},
		"a memory target the sidecar reaches though the API container cannot": {Autoscaling: memTarget(300), Deployment: DeploymentSpec{Resources: res("1Gi", "1Gi")},
			ImageCache: &ImageCacheSpec{MaintenanceResources: res("64Mi", "256Mi")}},
		"a memory target over an API container without a memory limit": {Autoscaling: memTarget(300), Deployment: DeploymentSpec{Resources: res("1Gi", "")}, ImageCache: &ImageCacheSpec{}},
	} {
		if errs := validateWorkload(&s, field.NewPath("spec")); len(errs) > 0 {
			t.Errorf("%s: %v", name, errs)
		}
	}
}
