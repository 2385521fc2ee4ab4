// Command sdk is the start-up floor of a KRM function written with the
// kpt functions SDK (and so with kyaml), as the project requires: it
// parses the ResourceList and writes it back, changing nothing.
package main

import (
	"os"

	"github.com/kptdev/krm-functions-sdk/go/fn"
)

func main() {
	if err := fn.AsMain(fn.ResourceListProcessorFunc(func(*fn.ResourceList) (bool, error) { return true, nil })); err != nil {
		os.Exit(1)
	}
}
