package history_test

import (
	"fmt"

	"github.com/c5c3/glance-krm/fn/glancekrm/history"
	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

// A rendered file set is named by its content: another content, another
// name, so a change rolls the pods that mount it.
func ExampleRendered_Name() {
	g := &v1alpha1.Glance{}
	g.Name, g.Namespace = "glance", "openstack"
	a := history.Rendered{Glance: g, Component: v1alpha1.ComponentConfig, Data: map[string]string{"glance-api.conf": "[DEFAULT]\ndebug = false\n"}}
	b := history.Rendered{Glance: g, Component: v1alpha1.ComponentConfig, Data: map[string]string{"glance-api.conf": "[DEFAULT]\ndebug = true\n"}}
	fmt.Println(a.Kind(), a.Name(), b.Name())
	// Output:
	// ConfigMap glance-config-141b86394d glance-config-4d08551ca5
}
