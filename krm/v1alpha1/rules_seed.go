package v1alpha1

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/robfig/cron/v3"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The seed operator's webhook rules (C5C3/cobaltcore operators/glance at
// da0515f, glance_webhook.go), in its words. Those a CEL rule can say are
// also markers on the types (the API server's verdict); the ones below
// need code: a cron parser, the oslo Dict syntax, quantities compared
// across maps, the Glance's own name. glance-krm ships no webhook, so on a
// live cluster these hold at build time only; the corpus marks each such
// case "apiserver: accepts".
const (
	MsgDecompressionNeedsStaging = "spec.staging.sizeLimit (or spec.staging.unbounded) must be set explicitly while importPlugins.decompression is enabled: the plugin expands the staged image by a ratio the caller picks and nothing caps the result"
	MsgImageCacheFilterName      = `the "cache" paste filter is injected while spec.imageCache is set: rename this middleware or unset spec.imageCache`
	MsgHarakiriBelowDrain        = "apiServer.uwsgi.harakiri must be strictly less than terminationGracePeriodSeconds - preStopSleepSeconds"
	MsgVPAMinOverMax             = "must not exceed maxAllowed"
	MsgAutoscalingBelowReplicas  = "maxReplicas must be >= spec.deployment.replicas when minReplicas is not set, because minReplicas defaults to spec.deployment.replicas"
)

// ValidateSeedRules runs the seed webhook's rules on a defaulted Glance.
func ValidateSeedRules(g *Glance) field.ErrorList {
	spec := field.NewPath("spec")
	s := &g.Spec
	var errs field.ErrorList
	if p := s.DBPurge; p != nil && p.Schedule != "" {
		if _, err := cron.ParseStandard(p.Schedule); err != nil {
			errs = append(errs, field.Invalid(spec.Child("dbPurge", "schedule"), p.Schedule, fmt.Sprintf("invalid cron expression: %v", err)))
		}
	}
	if p := s.ImportPlugins; p != nil && p.InjectMetadata != nil {
		errs = append(errs, validateInjectMetadata(p.InjectMetadata, spec.Child("importPlugins", "injectMetadata"))...)
	}
	if l := s.Logging; l != nil {
		for _, name := range slices.Sorted(maps.Keys(l.PerLoggerLevels)) {
			if strings.ContainsAny(name, ",=\r\n") {
				errs = append(errs, field.Invalid(keyPath(spec.Child("logging", "perLoggerLevels"), name), omit,
					"logger name must not contain a comma, '=', newline or carriage return: default_log_levels is a comma-separated list of logger=LEVEL"))
			}
		}
	}
	errs = append(errs, requestsWithinLimits(s.Deployment.Resources, spec.Child("deployment", "resources"))...)
	if j := s.Jobs; j != nil {
		errs = append(errs, requestsWithinLimits(j.Resources, spec.Child("jobs", "resources"))...)
	}
	if c := s.ImageCache; c != nil {
		errs = append(errs, requestsWithinLimits(c.MaintenanceResources, spec.Child("imageCache", "maintenanceResources"))...)
	}
	errs = append(errs, validateWorkload(s, spec)...)
	if v := s.Deployment.VerticalAutoscaling; v != nil {
		errs = append(errs, minWithinMax(v, spec.Child("deployment", "verticalAutoscaling"))...)
	}
	want := map[string]string{"app.kubernetes.io/name": "glance", "app.kubernetes.io/instance": g.Name}
	for i, c := range s.Deployment.TopologySpreadConstraints {
		p := spec.Child("deployment", "topologySpreadConstraints").Index(i).Child("labelSelector")
		switch {
		case c.LabelSelector == nil:
			errs = append(errs, field.Required(p, "labelSelector is required on each TopologySpreadConstraint"))
		case !maps.Equal(c.LabelSelector.MatchLabels, want):
			errs = append(errs, field.Invalid(p, omit, fmt.Sprintf("labelSelector.matchLabels must equal the Deployment selector labels %v", want)))
		case len(c.LabelSelector.MatchExpressions) > 0:
			errs = append(errs, field.Invalid(p.Child("matchExpressions"), omit, "labelSelector must not carry matchExpressions"))
		}
	}
	return errs
}

// validateInjectMetadata keeps every pair inside the oslo Dict syntax:
// pairs split on commas, each on its first colon, whitespace stripped.
func validateInjectMetadata(m *ImportInjectMetadataSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	props := path.Child("properties")
	for _, k := range slices.Sorted(maps.Keys(m.Properties)) {
		v := m.Properties[k]
		kp := keyPath(props, k)
		switch {
		case k == "":
			errs = append(errs, field.Invalid(props, k, "property name must not be empty"))
		case hasCRLF(k):
			errs = append(errs, field.Invalid(kp, omit, "property name must not contain newline or carriage-return characters"))
		case strings.Contains(k, ":"):
			errs = append(errs, field.Invalid(kp, omit, "property name must not contain a colon: the oslo Dict syntax splits each pair on the first colon"))
		case strings.Contains(k, ","):
			errs = append(errs, field.Invalid(kp, omit, "property name must not contain a comma: the oslo Dict syntax separates pairs on commas"))
		case strings.TrimSpace(k) != k:
			errs = append(errs, field.Invalid(kp, omit, "property name must not start or end with whitespace: the oslo parser strips it"))
		}
		switch {
		case hasCRLF(v):
			errs = append(errs, field.Invalid(kp, omit, "property value must not contain newline or carriage-return characters"))
		case strings.Contains(v, ","):
			errs = append(errs, field.Invalid(kp, omit, "property value must not contain a comma: the oslo Dict syntax separates pairs on commas"))
		case strings.TrimSpace(v) != v:
			errs = append(errs, field.Invalid(kp, omit, "property value must not start or end with whitespace: the oslo parser strips it"))
		}
		if utf8.RuneCountInString(k) > 255 || utf8.RuneCountInString(v) > 255 {
			errs = append(errs, field.Invalid(kp, omit, "each injected property name and value must be at most 255 characters"))
		}
	}
	return errs
}

// minWithinMax keeps a VPA's bounds ordered: the recommender would clamp
// every recommendation to an empty range.
func minWithinMax(v *VerticalAutoscalingSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, name := range slices.Sorted(maps.Keys(v.MinAllowed)) {
		low := v.MinAllowed[name]
		if high, ok := v.MaxAllowed[name]; ok && low.Cmp(high) > 0 {
			errs = append(errs, field.Invalid(keyPath(path.Child("minAllowed"), string(name)), low.String(), MsgVPAMinOverMax))
		}
	}
	return errs
}

// requestsWithinLimits refuses a request above its limit, which the API
// server would refuse on every pod.
func requestsWithinLimits(r *corev1.ResourceRequirements, path *field.Path) field.ErrorList {
	if r == nil {
		return nil
	}
	var errs field.ErrorList
	for _, name := range slices.Sorted(maps.Keys(r.Requests)) {
		req := r.Requests[name]
		if limit, ok := r.Limits[name]; ok && req.Cmp(limit) > 0 {
			errs = append(errs, field.Invalid(path.Child("requests", string(name)), req.String(),
				fmt.Sprintf("%s request must not exceed limit (%s)", name, limit.String())))
		}
	}
	return errs
}
