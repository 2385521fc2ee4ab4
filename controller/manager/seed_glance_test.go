package manager_test

import (
	"os"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

// TestFullSeedGlance: a Glance setting every field of the seed system's
// schema (the corpus case, without its target cluster) goes through the
// same BackendsReady states as a minimal one: the controller reads the
// fuller object without a change in behaviour.
func TestFullSeedGlance(t *testing.T) {
	raw, err := os.ReadFile("../../krm/testdata/corpus/96-valid-glance-every-seed-field.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var g v1alpha1.Glance
	if err := yaml.UnmarshalStrict(raw, &g); err != nil {
		t.Fatal(err)
	}
	ns := namespace(t)
	g.Namespace, g.Spec.TargetClusterRef = ns, nil
	a := backend(ns, "garage-a", g.Name, true, "s3-credentials")
	create(t, &g, a, credentialsSecret(ns, "s3-credentials", "a", "s"))
	wantCondition(t, &g, v1alpha1.ConditionBackendsReady, F, v1alpha1.ReasonWaitingForBackends)
	sec, d := wired(ns, g.Name, "garage-a")
	create(t, sec, d)
	wantCondition(t, a, v1alpha1.ConditionReady, T, v1alpha1.ReasonAllReady)
	wantCondition(t, &g, v1alpha1.ConditionBackendsReady, T, v1alpha1.ReasonAllBackendsProjected)
}
