package credentials_test

import (
	"fmt"

	"github.com/c5c3/glance-krm/fn/credentials"
)

// Where a credential's Secret key is mounted for the init container.
func ExamplePath() {
	fmt.Println(credentials.Path(true, "keystone_authtoken", "password"))
	fmt.Println(credentials.Path(false, "fast", "s3_store_secret_key"))
	// Output:
	// required/keystone_authtoken/password
	// optional/fast/s3_store_secret_key
}
