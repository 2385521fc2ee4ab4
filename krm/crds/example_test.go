package crds_test

import (
	"fmt"

	"github.com/c5c3/glance-krm/krm/crds"
)

// The CRD's own validators, as the API server runs them.
func ExampleFor() {
	v, err := crds.For("GlanceBackend")
	fmt.Println(v != nil, err)
	// Output:
	// true <nil>
}
