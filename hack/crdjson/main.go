// Command crdjson writes krm/crds/json/<crd>.json beside each generated CRD
// (make generate): the function decodes a CRD in every run that meets a
// Glance, and decoding JSON costs a sixth of decoding the same YAML.
// krm/crds's TestJSONCopiesAreCurrent fails when a copy is stale.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"sigs.k8s.io/yaml"
)

func main() {
	files, err := filepath.Glob("krm/crds/*.yaml")
	if err != nil || len(files) == 0 {
		fmt.Fprintln(os.Stderr, "crdjson: run from the repository root: no krm/crds/*.yaml", err)
		os.Exit(1)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err == nil {
			b, err = yaml.YAMLToJSON(b)
		}
		if err == nil {
			out := filepath.Join("krm/crds/json", strings.TrimSuffix(filepath.Base(f), ".yaml")+".json")
			err = os.WriteFile(out, append(b, '\n'), 0o644)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "crdjson:", f, err)
			os.Exit(1)
		}
	}
}
