package oslo_test

import (
	"fmt"

	"github.com/c5c3/glance-krm/fn/oslo"
)

// A value oslo.config would read otherwise is quoted; the file reads back
// as written.
func ExampleFile_String() {
	s := oslo.Section{Name: "DEFAULT"}
	s.Set("enabled_backends", "fast:s3,slow:s3")
	s.Set("password", " leading space")
	f := oslo.File{Header: []string{"rendered by glance-krm"}, Sections: []oslo.Section{s}}
	out, err := f.String()
	fmt.Print(out, err)
	// Output:
	// # rendered by glance-krm
	//
	// [DEFAULT]
	// enabled_backends = fast:s3,slow:s3
	// password = " leading space"
	// <nil>
}
