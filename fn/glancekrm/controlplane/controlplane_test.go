package controlplane

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/kptdev/krm-functions-sdk/go/fn"
)

// The seed's Quick Start ControlPlane (examples/controlplane, its source
// noted there).
func quickStart(t testing.TB, edit func(string) string) *fn.KubeObject {
	t.Helper()
	b, err := os.ReadFile("../../../examples/controlplane/controlplane.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	if edit != nil {
		s = edit(s)
	}
	o, err := fn.ParseKubeObject([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// The ControlPlane's Glance and each of its backends, marked as projected
// from it, and nothing from a ControlPlane without services.glance.
func TestProject(t *testing.T) {
	cp := quickStart(t, nil)
	if !IsControlPlane(cp) {
		t.Fatal("the Quick Start ControlPlane is not recognised")
	}
	children, errs := Project(cp)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	var got []string
	for _, c := range children {
		got = append(got, c.GetKind()+" "+c.GetNamespace()+"/"+c.GetName())
		if !IsProjected(c) || !ProjectedFrom(c, cp) {
			t.Errorf("%s %s does not carry the ControlPlane's marks", c.GetKind(), c.GetName())
		}
	}
	want := "Glance openstack/controlplane-glance, GlanceBackend openstack/controlplane-glance-default, GlanceBackend openstack/controlplane-glance-secondary"
	if strings.Join(got, ", ") != want {
		t.Errorf("children %s, want %s", strings.Join(got, ", "), want)
	}
	none, errs := Project(quickStart(t, func(s string) string { return s[:strings.Index(s, "    glance:")] }))
	if len(none) > 0 || len(errs) > 0 {
		t.Errorf("a ControlPlane without Glance projects %d objects, %v", len(none), errs)
	}
}

// A backend list with two defaults is refused with the field path.
func TestProjectRefuses(t *testing.T) {
	cp := quickStart(t, func(s string) string { return strings.Replace(s, "isDefault: false", "isDefault: true", 1) })
	_, errs := Project(cp)
	if len(errs) == 0 || !strings.Contains(errs.ToAggregate().Error(), "spec.services.glance.backends") {
		t.Errorf("two default backends: %v", errs)
	}
}

func ExampleProject() {
	b, _ := os.ReadFile("../../../examples/controlplane/controlplane.yaml")
	cp, _ := fn.ParseKubeObject(b)
	children, _ := Project(cp)
	for _, c := range children {
		fmt.Println(c.GetKind(), c.GetName())
	}
	// Output:
	// Glance controlplane-glance
	// GlanceBackend controlplane-glance-default
	// GlanceBackend controlplane-glance-secondary
}
