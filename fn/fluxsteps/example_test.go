package fluxsteps_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"github.com/c5c3/glance-krm/fn/fluxsteps"
)

// A build split into the folders a chain of Flux Kustomizations applies
// one after another.
func ExampleCommand() {
	build, _ := os.ReadFile("../../examples/several-apis/.expected/1-add-api.yaml")
	dir, _ := os.MkdirTemp("", "flux-steps")
	defer func() { _ = os.RemoveAll(dir) }()
	code := fluxsteps.Command([]string{dir}, bytes.NewReader(build), nil, os.Stderr)
	steps, _ := filepath.Glob(filepath.Join(dir, "*", "kustomization.yaml"))
	fmt.Println("exit", code)
	for _, s := range steps {
		fmt.Println(filepath.Base(filepath.Dir(s)))
	}
	// Output:
	// exit 0
	// 0-prepare
	// 1-workload
	// 2-after
}
