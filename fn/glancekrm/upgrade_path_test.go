package glancekrm

import (
	"strings"
	"testing"

	"github.com/kptdev/krm-functions-sdk/go/fn"

	"github.com/c5c3/glance-krm/fn/glancekrm/decode"
	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

// TestUpgradePathUnderKpt: the package keeps the previous render, so a
// change of openStackRelease is judged from the release it was rendered
// for: the next release and SLURP to SLURP pass, a skip and a downgrade
// are refused on spec.openStackRelease with the seed's reasons, and a
// refused change leaves the package as it was. Under kustomize (no
// previous render in the input) nothing is judged.
func TestUpgradePathUnderKpt(t *testing.T) {
	s := newState(t, "testdata/standalone/input.yaml")
	// The hand-written workload names no image of its own: spec.image
	// follows the release here (a tag naming another release is refused).
	containers, _, err := s.object("Deployment", "glance").NestedSlice("spec", "template", "spec", "containers")
	if err != nil || len(containers) == 0 {
		t.Fatalf("the Deployment's containers: %v", err)
	}
	for _, c := range containers {
		if _, err := c.RemoveNestedField("image"); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.object("Deployment", "glance").SetNestedField(containers, "spec", "template", "spec", "containers"); err != nil {
		t.Fatal(err)
	}
	try := func(release string) fn.Results {
		t.Helper()
		s.set("Glance", "glance", release, "spec", "openStackRelease")
		s.set("Glance", "glance", release, "spec", "image", "tag")
		b, err := s.rl.ToYAML()
		if err != nil {
			t.Fatal(err)
		}
		out, failed := runFn(t, b)
		rl, err := fn.ParseResourceList(out)
		if err != nil {
			t.Fatal(err)
		}
		if !failed {
			s.rl = rl
			s.rl.Results = nil
			return nil
		}
		return rl.Results
	}
	refused := func(rs fn.Results, reason string, words ...string) {
		t.Helper()
		for _, r := range rs {
			if r.Severity == fn.Error && r.Tags["reason"] == reason && r.Field != nil && r.Field.Path == "spec.openStackRelease" {
				for _, w := range words {
					if !strings.Contains(r.Message, w) {
						t.Errorf("the %s result does not say %q: %s", reason, w, r.Message)
					}
				}
				return
			}
		}
		t.Errorf("no error with reason %s on spec.openStackRelease; results: %v", reason, rs)
	}
	for _, ok := range []string{"2025.1", "2025.2", "2026.1"} {
		if rs := try(ok); rs != nil {
			t.Fatalf("%s after the previous render was refused: %v", ok, rs)
		}
	}
	refused(try("2027.2"), v1alpha1.ReasonUpgradePathInvalid, "from 2026.1 to 2027.2 over 2026.2, 2027.1", "2026.1 -> 2026.2 -> 2027.1 -> 2027.2", "previous render is for 2026.1")
	refused(try("2025.2"), v1alpha1.ReasonDowngradeNotSupported, "goes down from 2026.1 to 2025.2")
	if rs := try("2026.2"); rs != nil {
		t.Fatalf("2026.2 after 2026.1 was refused: %v", rs)
	}

	// Under kustomize the input's copies are a base's: no previous render.
	s.set("Glance", "glance", "2026.2", "spec", "openStackRelease")
	if err := s.object("Glance", "glance").SetAnnotation(decode.AnnotationKustomizeID, "x"); err != nil {
		t.Fatal(err)
	}
	if rs := try("2025.1"); rs != nil {
		t.Errorf("under kustomize a release change was judged: %v", rs)
	}
}
