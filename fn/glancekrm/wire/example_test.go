package wire_test

import (
	"fmt"

	"github.com/c5c3/glance-krm/fn/glancekrm/wire"
)

// The --config-dir flags a wired shell command line gets.
func ExampleConfigDirFlags() {
	fmt.Println(wire.ConfigDirFlags(wire.ConfigDirs))
	// Output:
	// --config-dir /etc/glance/glance.conf.d/ --config-dir /etc/glance/glance-api.conf.d/
}
