package glancekrm

import (
	"fmt"
	"maps"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	"github.com/c5c3/glance-krm/fn/findings"
	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

// policyRules are spec.policyOverrides resolved: the rules of the
// ConfigMap it names (its policy.yaml key), then the inline rules over
// them, as the seed operator merges them. The build cannot read the
// cluster, so the ConfigMap must be part of the input (the same
// kustomization or kpt package); its absence is an error, not a guess.
func policyRules(inv *inventory, ge *glanceEntry) (map[string]string, *field.Error) {
	po := ge.g.Spec.PolicyOverrides
	if po == nil {
		return nil, nil
	}
	rules := map[string]string{}
	if po.ConfigMapRef != nil {
		path := field.NewPath("spec", "policyOverrides", "configMapRef", "name")
		cm := inv.configMaps[objKey{ge.g.Namespace, po.ConfigMapRef.Name}]
		if cm == nil {
			return nil, field.NotFound(path, fmt.Sprintf(
				"ConfigMap %s is not in the input: glance-krm merges its policy.yaml at build time, so add the ConfigMap to the same kustomization or kpt package", po.ConfigMapRef.Name))
		}
		raw, ok, err := cm.NestedString("data", "policy.yaml")
		if err != nil || !ok {
			return nil, field.Invalid(path, po.ConfigMapRef.Name, fmt.Sprintf("ConfigMap %s has no data key policy.yaml", po.ConfigMapRef.Name))
		}
		var fromCM map[string]string
		if err := yaml.Unmarshal([]byte(raw), &fromCM); err != nil || fromCM == nil {
			return nil, field.Invalid(path, po.ConfigMapRef.Name, fmt.Sprintf("policy.yaml of ConfigMap %s is not a mapping of rule names to rule strings", po.ConfigMapRef.Name))
		}
		maps.Copy(rules, fromCM)
	}
	maps.Copy(rules, po.Rules)
	return rules, nil
}

// checkMetadef applies spec.metadefWrites to the merged policy overrides:
// a metadef create, update or delete rule they open to callers without
// the admin role is refused (AdminOnly, the default) or reported
// (PolicyOverrides), naming the rule.
func checkMetadef(ge *glanceEntry, policy map[string]string) ([]findings.Finding, bool) {
	opened := v1alpha1.OpenedMetadefRules(ge.g.Spec.OpenStackRelease, policy)
	if len(opened) == 0 {
		return nil, true
	}
	var results []findings.Finding
	severity, ok := findings.Error, false
	advice := "make it require the admin role, or set spec.metadefWrites: PolicyOverrides to let the overrides decide"
	if ge.g.Spec.MetadefWrites == v1alpha1.MetadefWritesPolicyOverrides {
		severity, ok, advice = findings.Warning, true, "allowed by spec.metadefWrites: PolicyOverrides"
	}
	path := "spec.policyOverrides"
	for _, rule := range opened {
		p := path
		if po := ge.g.Spec.PolicyOverrides; po != nil && po.Rules[rule] != "" {
			p = fmt.Sprintf("spec.policyOverrides.rules[%s]", rule)
		}
		results = append(results, findings.About(ge.obj, severity, "metadef-writes", fmt.Sprintf(
			"metadef write rule %q is open to callers without the admin role under the policy overrides (release %s): Glance keeps metadef create, update and delete admin-only, as anyone allowed can fill its database with metadef objects (metadef API security); %s",
			rule, ge.g.Spec.OpenStackRelease, advice)).At(p))
	}
	return results, ok
}
