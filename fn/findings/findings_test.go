package findings

import (
	"bytes"
	"testing"

	"github.com/c5c3/glance-krm/internal/testenv"
)

var sample = []Finding{
	{Rule: "exactly-one-default", Level: Error, Message: "spec.isDefault: exactly one default store is allowed", File: "glance/backends.yaml", Line: 12, Object: "GlanceBackend openstack/a"},
	{Rule: "store-removed", Level: Warning, Message: "store \"b\" is removed,\nimages: 100%", Object: "Glance openstack/glance"},
	{Rule: "info", Level: Note, Message: "rendered", File: "x.yaml"},
}

// TestSARIFFollowsItsSchema: the SARIF the function writes validates
// against the published SARIF 2.1.0 schema (testdata/SOURCE.md).
func TestSARIFFollowsItsSchema(t *testing.T) {
	for name, fs := range map[string][]Finding{"findings": sample, "none": nil} {
		t.Run(name, func(t *testing.T) {
			var b bytes.Buffer
			if err := Write(&b, FormatSARIF, Tool{Name: "glance-krm", Version: "v0.1.0", InformationURI: "https://github.com/c5c3/glance-krm"}, fs); err != nil {
				t.Fatal(err)
			}
			testenv.ValidSARIF(t, b.Bytes())
		})
	}
	// The check does refuse what the schema forbids: a run without its tool.
	if testenv.SARIFProblem(t, []byte(`{"version": "2.1.0", "runs": [{"results": []}]}`)) == nil {
		t.Error("a run without its tool passed the schema")
	}
}

func TestGitHubAnnotations(t *testing.T) {
	var b bytes.Buffer
	if err := Write(&b, FormatGitHub, Tool{}, sample); err != nil {
		t.Fatal(err)
	}
	want := "::error file=glance/backends.yaml,line=12,title=exactly-one-default::spec.isDefault: exactly one default store is allowed\n" +
		"::warning title=store-removed::store \"b\" is removed,%0Aimages: 100%25\n" +
		"::notice file=x.yaml,title=info::rendered\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}
