package decode

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kptdev/krm-functions-sdk/go/fn"
)

// The functionConfig is decoded as strictly as the CRs: every unknown
// field by its path, a known one of the wrong type by its path.
func TestConfig(t *testing.T) {
	for name, c := range map[string]struct {
		yaml, section string
		spec          ConfigSpec
		problems      ConfigProblems
	}{
		"RenderGlanceConfig": {"apiVersion: fn.glance.openstack.c5c3.io/v1alpha1\nkind: RenderGlanceConfig\nmetadata: {name: x}\nspec: {credentialsImage: m/fn:v1, workloads: none}\n", "spec",
			ConfigSpec{CredentialsImage: "m/fn:v1", Workloads: "none"}, ConfigProblems{}},
		"unknown fields, at the top and in spec": {"apiVersion: a/v1\nkind: RenderGlanceConfig\nextra: 1\nspec: {workload: none, credentialsImage: m/fn:v1}\n", "spec",
			ConfigSpec{CredentialsImage: "m/fn:v1"}, ConfigProblems{Unknown: []string{"extra", "spec.workload"}}},
		"a known field of the wrong type": {"apiVersion: a/v1\nkind: RenderGlanceConfig\nspec: {workloads: [none]}\n", "spec",
			ConfigSpec{}, ConfigProblems{WrongType: "spec.workloads"}},
		"a ConfigMap's data": {"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata: {workloads: none, history: \"3\"}\n", "data",
			ConfigSpec{Workloads: "none"}, ConfigProblems{Unknown: []string{"data.history"}}},
		"a ConfigMap's data that is no mapping": {"apiVersion: v1\nkind: ConfigMap\ndata: [a]\n", "data",
			ConfigSpec{}, ConfigProblems{WrongType: "data"}},
		"a ConfigMap without data": {"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n", "data", ConfigSpec{}, ConfigProblems{}},
	} {
		t.Run(name, func(t *testing.T) {
			obj, err := fn.ParseKubeObject([]byte(c.yaml))
			if err != nil {
				t.Fatal(err)
			}
			spec, problems, err := Config(obj, c.section)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(c.spec, spec); diff != "" {
				t.Errorf("spec (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(c.problems, problems); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}
