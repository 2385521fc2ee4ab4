package decode_test

import (
	"fmt"

	"github.com/kptdev/krm-functions-sdk/go/fn"

	"github.com/c5c3/glance-krm/fn/glancekrm/decode"
)

// The functionConfig is decoded as strictly as a CR.
func ExampleConfig() {
	obj, _ := fn.ParseKubeObject([]byte("apiVersion: fn.glance.openstack.c5c3.io/v1alpha1\nkind: RenderGlanceConfig\nmetadata: {name: render}\nspec: {workloads: none, workload: none}\n"))
	spec, problems, err := decode.Config(obj, "spec")
	fmt.Println(spec.Workloads, problems.Unknown, err)
	// Output:
	// none [spec.workload] <nil>
}
