package v1alpha1_test

import (
	"fmt"

	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

// ValidateGlance runs the contract's rules for one Glance as pure Go, the
// same rules the CRD's CEL runs in the API server: each error names the
// field path and says what is wrong in words a user can search for.
func ExampleValidateGlance() {
	g := &v1alpha1.Glance{}
	g.Name, g.Namespace = "glance", "openstack"
	g.Spec.OpenStackRelease = "2025.2"
	g.Spec.Image.Repository, g.Spec.Image.Tag = "ghcr.io/c5c3/glance", "2025.2"
	g.Spec.KeystoneEndpoint = "keystone:5000" // not a URL
	// and no Secret named for the database or the service user
	for _, err := range v1alpha1.ValidateGlance(g) {
		fmt.Println(err.Field, "|", err.Type, "|", err.Detail)
	}
	// Output:
	// spec.keystoneEndpoint | Invalid value | should match '^https?://'
	// spec.serviceUser.secretRef.name | Invalid value | should be at least 1 chars long
	// spec.database.secretRef.name | Invalid value | should be at least 1 chars long
}
