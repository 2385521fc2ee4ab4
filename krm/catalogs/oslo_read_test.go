package catalogs_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/c5c3/glance-krm/fn/oslo"
	"github.com/c5c3/glance-krm/internal/testenv"
	"github.com/c5c3/glance-krm/krm/catalogs"
)

// catalogStore is the store section the test writes the catalog's store
// options into, named like a GlanceBackend.
const catalogStore = "primary"

// TestCatalogsReadByOsloConfig proves that each release's option catalog
// names every option as that release's oslo.config reads it from a file:
// it writes a glance-api.conf holding every option of the catalog, each
// with a value valid for its type that is not its default (the store
// options in a store section enabled_backends names), and reads each back
// through the release's own oslo.config with glance-api's options
// registered (testdata/catalog_read.py). An option the file does not set
// (a command-line spelling such as log-dir, which oslo.config reads as
// log_dir) comes back as its default and fails the test: the release
// rules would accept a name Glance ignores and refuse the one it reads.
func TestCatalogsReadByOsloConfig(t *testing.T) {
	testenv.OsloConfig(t)
	script, err := os.ReadFile("testdata/catalog_read.py")
	if err != nil {
		t.Fatal(err)
	}
	matrix := testenv.GlancePythons()
	for _, r := range catalogs.Releases() {
		if !slices.ContainsFunc(matrix, func(p testenv.GlancePython) bool { return p.Release == r }) {
			t.Errorf("krm/catalogs/%s.json: no Glance of release %s to read it with (testenv.GlancePythons)", r, r)
		}
	}
	for _, py := range matrix {
		t.Run(py.Release, func(t *testing.T) {
			t.Parallel() // each in its own python3, mostly importing
			py.Require(t)
			cat := catalogs.For(py.Release)
			if cat == nil {
				t.Fatalf("no catalog for %s", py.Release)
			}
			readCatalog(t, py.Python, string(script), cat)
		})
	}
}

func readCatalog(t *testing.T, py testenv.Python, script string, cat *catalogs.Catalog) {
	sections := map[string][]string{}
	total := len(cat.StoreOptions)
	for s, opts := range cat.Config {
		sections[s] = sortedNames(opts)
		total += len(opts)
	}
	fixed := map[string]map[string]string{
		"DEFAULT":      {"enabled_backends": catalogStore + ":s3"},
		"glance_store": {"default_backend": catalogStore},
	}

	cmd := withNamespaces(t, py.Command(script))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &bytes.Buffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	lines := bufio.NewScanner(stdout)
	lines.Buffer(nil, 64<<20)
	ask := func(req, resp any) {
		t.Helper()
		b, _ := json.Marshal(req)
		if _, err := stdin.Write(append(b, '\n')); err != nil {
			t.Fatalf("%s: %v", py.Suite, err)
		}
		if !lines.Scan() {
			_ = cmd.Wait()
			t.Fatalf("%s: catalog_read.py answered nothing: %v\n%s", py.Suite, lines.Err(), stderr)
		}
		if err := json.Unmarshal(lines.Bytes(), resp); err != nil {
			t.Fatalf("%s: %v: %s", py.Suite, err, lines.Bytes())
		}
	}

	var planned struct {
		Values  map[string]map[string]string `json:"values"`
		Unknown [][3]string                  `json:"unknown"`
	}
	ask(map[string]any{"sections": sections, "store": catalogStore, "storeOptions": sortedNames(cat.StoreOptions), "fixed": fixed}, &planned)
	for _, u := range planned.Unknown {
		t.Errorf("%s: [%s] %s: %s", py.Suite, u[0], u[1], u[2])
	}

	// Rendered style: DEFAULT first, then the sections in order, the store
	// last, written by the writer the function renders with.
	f := &oslo.File{Header: []string{"every option of krm/catalogs/" + cat.Release + ".json"}}
	n := 0
	for _, s := range append(append([]string{"DEFAULT"}, slices.DeleteFunc(sortedNames(planned.Values), func(s string) bool {
		return s == "DEFAULT" || s == catalogStore
	})...), catalogStore) {
		sec := oslo.Section{Name: s}
		for _, k := range sortedNames(planned.Values[s]) {
			sec.Set(k, planned.Values[s][k])
			n++
		}
		f.Sections = append(f.Sections, sec)
	}
	if n+len(planned.Unknown) != total {
		t.Fatalf("%s: %d options written and %d unknown, but the catalog has %d", py.Suite, n, len(planned.Unknown), total)
	}
	path := writeConf(t, f)

	var read map[string]map[string]struct{ Want, Got, From string }
	ask(map[string]any{"file": path, "values": planned.Values}, &read)
	bad, got := 0, 0
	for _, s := range sortedNames(read) {
		for _, k := range sortedNames(read[s]) {
			got++
			if r := read[s][k]; r.Got != r.Want || r.From != "user "+path {
				bad++
				t.Errorf("%s: [%s] %s: oslo.config read %s (from: %s), want %s from the file", py.Suite, s, k, r.Got, r.From, r.Want)
			}
		}
	}
	if got != n {
		t.Errorf("%s: %d options read back, %d written", py.Suite, got, n)
	}
	t.Logf("%s: %d of %d options of krm/catalogs/%s.json read back from the file; %d not read, %d not registered",
		py.Suite, got-bad, total, cat.Release, bad, len(planned.Unknown))
}

// writeConf writes f as a glance-api.conf for oslo.config to read back.
func writeConf(t *testing.T, f *oslo.File) string {
	t.Helper()
	text, err := f.String()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "glance-api.conf")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func sortedNames[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}

// withNamespaces gives a catalog script the oslo-config-generator
// namespaces it reads (namespaces.txt, the one list the scripts share).
func withNamespaces(t *testing.T, cmd *exec.Cmd) *exec.Cmd {
	t.Helper()
	if cmd.Env == nil {
		cmd.Env = os.Environ()
	}
	cmd.Env = append(cmd.Env, testenv.OsloNamespacesEnv(t))
	return cmd
}
