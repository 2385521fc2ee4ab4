package workload_test

import (
	"fmt"

	"github.com/c5c3/glance-krm/fn/glancekrm/workload"
)

// An object's identity: a generated object the input already holds is the
// user's.
func ExampleIdentity() {
	fmt.Println(workload.Identity("apps/v1", "Deployment", "openstack", "glance"))
	// Output:
	// apps/Deployment/openstack/glance
}
