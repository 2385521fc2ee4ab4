package explain_test

import (
	"fmt"
	"os"

	"github.com/c5c3/glance-krm/fn/explain"
)

// What a change between two renders does, and whether it blocks: from
// examples/multistore to examples/standalone, one Glance goes and the
// gate blocks it.
func ExampleCompare() {
	var renders [2]*explain.Render
	for i, f := range []string{"multistore", "standalone"} {
		b, _ := os.ReadFile("../../examples/" + f + "/.expected/output.yaml")
		renders[i], _ = explain.Read(b)
	}
	r := explain.Compare(renders[0], renders[1], explain.Options{FailOn: []string{explain.StoreRemoved}})
	for _, w := range r.Warnings {
		fmt.Println(w.Kind, w.Glance)
	}
	fmt.Println("blocked:", r.Blocked())
	// Output:
	// glance-removed /glance-multistore
	// blocked: true
}
