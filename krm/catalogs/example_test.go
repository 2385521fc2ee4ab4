package catalogs_test

import (
	"fmt"

	"github.com/c5c3/glance-krm/krm/catalogs"
)

// Each release's catalog names the options its Glance reads.
func ExampleFor() {
	c := catalogs.For("2025.2")
	_, ok := c.Section("keystone_authtoken")
	fmt.Println(c.Release, ok)
	fmt.Println(catalogs.Suggest("show_image_direct_urls", []string{"show_image_direct_url", "show_multiple_locations"}))
	// Output:
	// 2025.2 true
	// show_image_direct_url
}
