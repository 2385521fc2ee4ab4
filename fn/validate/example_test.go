package validate_test

import (
	"fmt"

	fnvalidate "github.com/c5c3/glance-krm/fn/validate"
)

// The function's verdict on files, without a build: a Glance with two
// default stores (the golden case two-defaults).
func ExampleRun() {
	found, ok, err := fnvalidate.Run([]string{"../glancekrm/testdata/two-defaults/input.yaml"}, fnvalidate.Options{})
	fmt.Println(ok, err)
	for _, f := range found {
		fmt.Println(f.Level, f.Rule)
	}
	// Output:
	// false <nil>
	// error exactly-one-default
}
