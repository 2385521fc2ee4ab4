package validate

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/c5c3/glance-krm/fn/findings"
	"github.com/c5c3/glance-krm/internal/testenv"
)

func TestRunNamesFileAndLine(t *testing.T) {
	fs, ok, err := Run([]string{"testdata/pkg"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if ok {
		t.Error("two defaults and a bad host passed")
	}
	type where struct {
		rule, file string
		line       int
	}
	var got []where
	for _, f := range fs {
		got = append(got, where{f.Rule, f.File, f.Line})
	}
	want := []where{
		{"exactly-one-default", filepath.Join("testdata/pkg", "glance.yaml"), 2},
		{"schema", filepath.Join("testdata/pkg", "backends.yaml"), 26},
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(where{})); diff != "" {
		t.Errorf("findings (-want +got):\n%s\n%+v", diff, fs)
	}
	// A file alone, as given.
	fs, _, err = Run([]string{"testdata/pkg/backends.yaml"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(fs) == 0 || fs[0].File != "testdata/pkg/backends.yaml" || fs[0].Line != 26 {
		t.Errorf("the file alone: %+v", fs)
	}
	if _, _, err := Run([]string{"testdata/missing"}, Options{}); err == nil {
		t.Error("a missing path is no error")
	}
}

// TestSARIFOfRealFindings: validate's SARIF follows the published schema.
func TestSARIFOfRealFindings(t *testing.T) {
	fs, _, err := Run([]string{"testdata/pkg"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := findings.Write(&b, findings.FormatSARIF, findings.Tool{Name: "glance-krm validate", Version: "test"}, fs); err != nil {
		t.Fatal(err)
	}
	testenv.ValidSARIF(t, b.Bytes())
}
