package testenv

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// ValidSARIF fails t unless doc validates against the published SARIF
// 2.1.0 schema (fn/findings/testdata/sarif-schema-2.1.0.json, its source
// noted beside it).
func ValidSARIF(t testing.TB, doc []byte) {
	t.Helper()
	if err := SARIFProblem(t, doc); err != nil {
		t.Errorf("the SARIF does not follow its schema: %v\n%s", err, doc)
	}
}

// SARIFProblem is why doc does not validate against the SARIF schema, or
// nil.
func SARIFProblem(t testing.TB, doc []byte) error {
	t.Helper()
	return SchemaProblem(t, filepath.Join(RepoRoot(), "fn", "findings", "testdata", "sarif-schema-2.1.0.json"), doc)
}

// SchemaProblem is why the JSON document doc does not validate against the
// JSON schema in the file schemaPath, or nil.
func SchemaProblem(t testing.TB, schemaPath string, doc []byte) error {
	t.Helper()
	b, err := os.ReadFile(schemaPath)
	if err != nil {
		t.Fatal(err)
	}
	schemaDoc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	name := filepath.Base(schemaPath)
	c := jsonschema.NewCompiler()
	if err := c.AddResource(name, schemaDoc); err != nil {
		t.Fatal(err)
	}
	schema, err := c.Compile(name)
	if err != nil {
		t.Fatal(err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return err
	}
	return schema.Validate(v)
}
