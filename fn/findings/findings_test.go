package findings

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

var sample = []Finding{
	{Rule: "exactly-one-default", Level: Error, Message: "spec.isDefault: exactly one default store is allowed", File: "glance/backends.yaml", Line: 12, Object: "GlanceBackend openstack/a"},
	{Rule: "store-removed", Level: Warning, Message: "store \"b\" is removed,\nimages: 100%", Object: "Glance openstack/glance"},
	{Rule: "info", Level: Note, Message: "rendered", File: "x.yaml"},
}

// TestSARIFFollowsItsSchema: the SARIF the function writes validates
// against the published SARIF 2.1.0 schema (testdata/SOURCE.md).
func TestSARIFFollowsItsSchema(t *testing.T) {
	f, err := os.Open("testdata/sarif-schema-2.1.0.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("sarif-schema-2.1.0.json", doc); err != nil {
		t.Fatal(err)
	}
	schema, err := c.Compile("sarif-schema-2.1.0.json")
	if err != nil {
		t.Fatal(err)
	}
	for name, fs := range map[string][]Finding{"findings": sample, "none": nil} {
		t.Run(name, func(t *testing.T) {
			var b bytes.Buffer
			if err := Write(&b, FormatSARIF, Tool{Name: "glance-krm", Version: "v0.1.0", InformationURI: "https://github.com/c5c3/glance-krm"}, fs); err != nil {
				t.Fatal(err)
			}
			v, err := jsonschema.UnmarshalJSON(&b)
			if err != nil {
				t.Fatal(err)
			}
			if err := schema.Validate(v); err != nil {
				t.Errorf("the SARIF does not follow its schema: %v\n%s", err, b.String())
			}
		})
	}
	// The validator does refuse what the schema forbids.
	bad, _ := jsonschema.UnmarshalJSON(strings.NewReader(`{"version": "2.1.0", "runs": [{"results": []}]}`))
	if schema.Validate(bad) == nil {
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
