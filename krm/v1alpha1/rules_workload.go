package v1alpha1

import (
	"fmt"
	"maps"
	"slices"
	"strconv"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The seed's newer webhook rules on the workload fields (its
// glance_webhook.go at 177d145 and the shared validation it calls): node
// placement, the HPA's targets and behavior. Each refuses at build time
// what the API server would refuse only when the GitOps engine applies the
// Deployment or the HPA, or what would leave the HPA unable to scale.
const (
	MsgTolerationEmptyKey  = "operator must be Exists when `key` is empty, which means \"match all values and all keys\""
	MsgTolerationSeconds   = "effect must be 'NoExecute' when `tolerationSeconds` is set"
	MsgTolerationExists    = "value must be empty when `operator` is 'Exists'"
	MsgTolerationInteger   = "value must be an integer when `operator` is 'Lt' or 'Gt'"
	MsgBehaviorWindow      = "stabilizationWindowSeconds must be between 0 and 3600"
	MsgBehaviorValue       = "value must be greater than zero"
	MsgBehaviorPeriod      = "periodSeconds must be between 1 and 1800"
	MsgBehaviorTolerance   = "tolerance must not be negative"
	maxStabilizationWindow = 3600
	maxPolicyPeriod        = 1800
)

// validateWorkload runs the workload rules of a defaulted Glance.
func validateWorkload(s *GlanceSpec, spec *field.Path) field.ErrorList {
	errs := nodePlacement(s.Deployment.NodePlacementSpec, spec.Child("deployment"))
	if j := s.Jobs; j != nil {
		errs = append(errs, nodePlacement(j.NodePlacementSpec, spec.Child("jobs"))...)
	}
	if a := s.Autoscaling; a != nil {
		errs = append(errs, targetRequests(a, s.Deployment.Resources, spec.Child("deployment", "resources"))...)
		pod := []corev1.ResourceRequirements{s.APIResources()}
		if s.ImageCache != nil {
			errs = append(errs, targetRequests(a, s.ImageCache.MaintenanceResources, spec.Child("imageCache", "maintenanceResources"))...)
			pod = append(pod, s.MaintenanceResources())
		}
		errs = append(errs, targetsReachable(a, pod, spec.Child("autoscaling"))...)
		if a.Behavior != nil {
			errs = append(errs, behavior(a.Behavior, spec.Child("autoscaling", "behavior"))...)
		}
	}
	return errs
}

// nodePlacement holds a node selector to label syntax and tolerations to
// the API server's rules.
func nodePlacement(p NodePlacementSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	sel := path.Child("nodeSelector")
	for _, k := range slices.Sorted(maps.Keys(p.NodeSelector)) {
		for _, msg := range validation.IsQualifiedName(k) {
			errs = append(errs, field.Invalid(sel, k, msg))
		}
		for _, msg := range validation.IsValidLabelValue(p.NodeSelector[k]) {
			errs = append(errs, field.Invalid(keyPath(sel, k), p.NodeSelector[k], msg))
		}
	}
	for i, t := range p.Tolerations {
		tp := path.Child("tolerations").Index(i)
		if t.Key == "" && t.Operator != corev1.TolerationOpExists {
			errs = append(errs, field.Invalid(tp.Child("operator"), t.Operator, MsgTolerationEmptyKey))
		}
		if t.TolerationSeconds != nil && t.Effect != corev1.TaintEffectNoExecute {
			errs = append(errs, field.Invalid(tp.Child("effect"), t.Effect, MsgTolerationSeconds))
		}
		switch t.Operator {
		case corev1.TolerationOpEqual, "":
		case corev1.TolerationOpExists:
			if t.Value != "" {
				errs = append(errs, field.Invalid(tp.Child("value"), t.Value, MsgTolerationExists))
			}
		case "Lt", "Gt":
			if _, err := strconv.ParseInt(t.Value, 10, 64); err != nil {
				errs = append(errs, field.Invalid(tp.Child("value"), t.Value, MsgTolerationInteger))
			}
		default:
			errs = append(errs, field.NotSupported(tp.Child("operator"), t.Operator, []string{"Equal", "Exists", "Lt", "Gt"}))
		}
		switch t.Effect {
		case "", corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute:
		default:
			errs = append(errs, field.NotSupported(tp.Child("effect"), t.Effect, []string{"NoSchedule", "PreferNoSchedule", "NoExecute"}))
		}
	}
	return errs
}

// hpaTarget is one utilization target of an HPA.
type hpaTarget struct {
	name   corev1.ResourceName
	field  string
	target int32
}

// hpaTargets are the utilization targets spec.autoscaling sets.
func hpaTargets(a *AutoscalingSpec) []hpaTarget {
	var out []hpaTarget
	if a.TargetCPUUtilization != nil {
		out = append(out, hpaTarget{corev1.ResourceCPU, "targetCPUUtilization", *a.TargetCPUUtilization})
	}
	if a.TargetMemoryUtilization != nil {
		out = append(out, hpaTarget{corev1.ResourceMemory, "targetMemoryUtilization", *a.TargetMemoryUtilization})
	}
	return out
}

// targetRequests refuses a zero request under a utilization target: the
// HPA divides the pods' usage by the sum of their requests.
func targetRequests(a *AutoscalingSpec, r *corev1.ResourceRequirements, path *field.Path) field.ErrorList {
	if r == nil {
		return nil
	}
	var errs field.ErrorList
	for _, t := range hpaTargets(a) {
		if q, ok := r.Requests[t.name]; ok {
			if q.Sign() <= 0 {
				errs = append(errs, field.Invalid(path.Child("requests", string(t.name)), q.String(),
					fmt.Sprintf("%s request must be greater than zero while %s is set: the HorizontalPodAutoscaler divides the pods' usage by the sum of their containers' requests", t.name, t.field)))
			}
		} else if q, ok := r.Limits[t.name]; ok && q.Sign() <= 0 {
			errs = append(errs, field.Invalid(path.Child("limits", string(t.name)), q.String(),
				fmt.Sprintf("%s limit must be greater than zero while %s is set: without a request the API server copies the limit into the request, and the HorizontalPodAutoscaler divides the pods' usage by the sum of their containers' requests", t.name, t.field)))
		}
	}
	return errs
}

// targetsReachable refuses a target above 100 that the pod can never
// reach: each container's usage stops at its limit, limit/request of its
// request (as generated, with the defaults; a limit named alone is its
// request too), so the pod's stops at the largest of them. A container
// without a limit is not bounded, and neither is the pod.
func targetsReachable(a *AutoscalingSpec, pod []corev1.ResourceRequirements, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, t := range hpaTargets(a) {
		if t.target <= 100 {
			continue
		}
		ceiling, bounded := int64(0), true
		for _, r := range pod {
			limit, hasLimit := r.Limits[t.name]
			req, hasReq := r.Requests[t.name]
			if !hasReq {
				req = limit
			}
			if !hasLimit || req.Sign() <= 0 {
				bounded = false
				break
			}
			ceiling = max(ceiling, limit.MilliValue()*100/req.MilliValue())
		}
		if bounded && int64(t.target) > ceiling {
			errs = append(errs, field.Invalid(path.Child(t.field), t.target, fmt.Sprintf(
				"%s %d can never be reached: no container of the API pod can use more than %d%% of its %s request, because its %s limit caps it there; set a %s limit above the request, or a target of at most %d",
				t.field, t.target, ceiling, t.name, t.name, t.name, ceiling)))
		}
	}
	return errs
}

// behavior holds an HPA behavior to autoscaling/v2's bounds.
func behavior(b *autoscalingv2.HorizontalPodAutoscalerBehavior, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, d := range []struct {
		name  string
		rules *autoscalingv2.HPAScalingRules
	}{{"scaleUp", b.ScaleUp}, {"scaleDown", b.ScaleDown}} {
		if d.rules == nil {
			continue
		}
		p := path.Child(d.name)
		if w := d.rules.StabilizationWindowSeconds; w != nil && (*w < 0 || *w > maxStabilizationWindow) {
			errs = append(errs, field.Invalid(p.Child("stabilizationWindowSeconds"), *w, MsgBehaviorWindow))
		}
		if sp := d.rules.SelectPolicy; sp != nil && !slices.Contains([]autoscalingv2.ScalingPolicySelect{autoscalingv2.MaxChangePolicySelect, autoscalingv2.MinChangePolicySelect, autoscalingv2.DisabledPolicySelect}, *sp) {
			errs = append(errs, field.NotSupported(p.Child("selectPolicy"), *sp, []string{"Max", "Min", "Disabled"}))
		}
		if tol := d.rules.Tolerance; tol != nil && tol.Sign() < 0 {
			errs = append(errs, field.Invalid(p.Child("tolerance"), tol.String(), MsgBehaviorTolerance))
		}
		for i, pol := range d.rules.Policies {
			pp := p.Child("policies").Index(i)
			if pol.Type != autoscalingv2.PodsScalingPolicy && pol.Type != autoscalingv2.PercentScalingPolicy {
				errs = append(errs, field.NotSupported(pp.Child("type"), pol.Type, []string{"Pods", "Percent"}))
			}
			if pol.Value <= 0 {
				errs = append(errs, field.Invalid(pp.Child("value"), pol.Value, MsgBehaviorValue))
			}
			if pol.PeriodSeconds < 1 || pol.PeriodSeconds > maxPolicyPeriod {
				errs = append(errs, field.Invalid(pp.Child("periodSeconds"), pol.PeriodSeconds, MsgBehaviorPeriod))
			}
		}
	}
	return errs
}
