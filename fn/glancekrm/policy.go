package glancekrm

import (
	"fmt"
	"maps"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"
)

// policyRules are spec.policyOverrides resolved: the rules of the
// ConfigMap it names (its policy.yaml key), then the inline rules over
// them, as the seed operator merges them. The build cannot read the
// cluster, so the ConfigMap must be part of the input (the same
// kustomization or kpt package); its absence is an error, not a guess.
func (r *run) policyRules(ge *glanceEntry) (map[string]string, *field.Error) {
	po := ge.g.Spec.PolicyOverrides
	if po == nil {
		return nil, nil
	}
	rules := map[string]string{}
	if po.ConfigMapRef != nil {
		path := field.NewPath("spec", "policyOverrides", "configMapRef", "name")
		cm := r.configMaps[objKey{ge.g.Namespace, po.ConfigMapRef.Name}]
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
