package catalogs_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"go/format"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/c5c3/glance-krm/fn/oslo"
	"github.com/c5c3/glance-krm/internal/testenv"
	"github.com/c5c3/glance-krm/krm/catalogs"
	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

// secretScan is what hack/secret-options.py scan prints for one release.
type secretScan struct {
	Release    string      `json:"release"`
	Secret     [][2]string `json:"secret"`
	Deprecated [][4]string `json:"deprecated"`
}

// TestDeprecatedSpellingsReadByOsloConfig proves the generated lists of
// krm/v1alpha1/zz_generated.secret_options.go against the Glance of every
// release with a catalog: hack/secret-options.py scans it, and
//   - the secret options it finds by their names are the ones its catalog
//     marks secret (the two read the same option objects);
//   - each deprecated spelling it finds is read by that release's
//     oslo.config, from a file, as the option it stands for: a file sets
//     only the spelling, and glance-api's own cfg.CONF (catalog_read.py)
//     says the option came from that file with the value written, so the
//     rules refuse a spelling Glance really reads;
//   - the union of the scans, written by hack/secret-options.py write, is
//     the committed file (make generate-secret-options).
func TestDeprecatedSpellingsReadByOsloConfig(t *testing.T) {
	testenv.OsloConfig(t)
	generator, err := os.ReadFile("../../hack/secret-options.py")
	if err != nil {
		t.Fatal(err)
	}
	reader, err := os.ReadFile("testdata/catalog_read.py")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	scans := map[string][]byte{}
	t.Run("releases", func(t *testing.T) {
		for _, py := range testenv.GlancePythons() {
			t.Run(py.Release, func(t *testing.T) {
				t.Parallel()
				py.Require(t)
				var stderr bytes.Buffer
				cmd := withNamespaces(t, py.Command(string(generator), "scan", py.Release))
				cmd.Stderr = &stderr
				out, err := cmd.Output()
				if err != nil {
					t.Fatalf("secret-options.py scan: %v\n%s", err, stderr.String())
				}
				var scan secretScan
				if err := json.Unmarshal(out, &scan); err != nil {
					t.Fatalf("%v: %s", err, out)
				}
				mu.Lock()
				scans[py.Release] = out
				mu.Unlock()
				checkScanSecrets(t, scan)
				readDeprecated(t, py.Python, string(reader), scan)
			})
		}
	})
	if len(scans) < len(testenv.GlancePythons()) {
		t.Skipf("the union needs a scan of every release; %d of %d", len(scans), len(testenv.GlancePythons()))
	}
	dir := t.TempDir()
	args := []string{"../../hack/secret-options.py", "write"}
	for _, r := range slices.Sorted(maps.Keys(scans)) {
		p := filepath.Join(dir, r+".json")
		if err := os.WriteFile(p, scans[r], 0o644); err != nil {
			t.Fatal(err)
		}
		args = append(args, p)
	}
	out, err := withNamespaces(t, exec.Command("/usr/bin/python3", args...)).Output()
	if err != nil {
		t.Fatalf("secret-options.py write: %v", err)
	}
	formatted, err := format.Source(out)
	if err != nil {
		t.Fatal(err)
	}
	committed, err := os.ReadFile("../../krm/v1alpha1/zz_generated.secret_options.go")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(committed), string(formatted)); diff != "" {
		t.Errorf("krm/v1alpha1/zz_generated.secret_options.go is stale: run make generate-secret-options (-committed +now):\n%s", diff)
	}
}

// checkScanSecrets: the scan's secret options by name are its catalog's,
// and each is in the committed list, as is each deprecated spelling.
func checkScanSecrets(t *testing.T, scan secretScan) {
	t.Helper()
	cat := catalogs.For(scan.Release)
	if cat == nil {
		t.Fatalf("no catalog for %s", scan.Release)
	}
	var fromCatalog, fromScan []string
	for s, opts := range cat.Config {
		for k, o := range opts {
			if o.Secret {
				fromCatalog = append(fromCatalog, "["+s+"] "+k)
			}
		}
	}
	for _, o := range scan.Secret {
		fromScan = append(fromScan, "["+o[0]+"] "+o[1])
		if !v1alpha1.IsSecretOption(v1alpha1.ConfigOption{Section: o[0], Key: o[1]}) {
			t.Errorf("[%s] %s is secret in %s, but not in GlanceSecretOptions", o[0], o[1], scan.Release)
		}
	}
	slices.Sort(fromCatalog)
	slices.Sort(fromScan)
	if diff := cmp.Diff(fromCatalog, fromScan); diff != "" {
		t.Errorf("secret options of krm/catalogs/%s.json (-) and of the scan (+):\n%s", scan.Release, diff)
	}
	for _, d := range scan.Deprecated {
		spelling, cur := v1alpha1.ConfigOption{Section: d[0], Key: d[1]}, v1alpha1.ConfigOption{Section: d[2], Key: d[3]}
		if got, ok := v1alpha1.GlanceDeprecatedOptions[spelling]; !ok || got != cur {
			t.Errorf("[%s] %s sets [%s] %s in %s, but GlanceDeprecatedOptions says %v", d[0], d[1], d[2], d[3], scan.Release, got)
		}
	}
}

// readDeprecated writes each deprecated spelling of the scan into a
// glance-api.conf, with a value valid for the option it stands for, and
// reads that option back through the release's oslo.config. A file holds
// one spelling of each option (an option with three spellings takes three
// files, in rounds), and never the option's own name. Each round is read
// twice: with the sections spelt as folded, and upper-cased (DEFAULT
// aside), as oslo.config folds a file's sections too ([DATABASE]
// sql_connection is [database] connection).
func readDeprecated(t *testing.T, py testenv.Python, script string, scan secretScan) {
	t.Helper()
	byOption := map[v1alpha1.ConfigOption][]v1alpha1.ConfigOption{}
	for _, d := range scan.Deprecated {
		cur := v1alpha1.ConfigOption{Section: d[2], Key: d[3]}
		byOption[cur] = append(byOption[cur], v1alpha1.ConfigOption{Section: d[0], Key: d[1]})
	}
	byName := func(a, b v1alpha1.ConfigOption) int { return strings.Compare(a.Section+" "+a.Key, b.Section+" "+b.Key) }
	fixed := map[string]map[string]string{"DEFAULT": {"enabled_backends": catalogStore + ":s3"}, "glance_store": {"default_backend": catalogStore}}
	read := 0
	for i := 0; ; i++ {
		round, upper := i/2, i%2 == 1
		// This round's spelling of each option that has one more.
		spelling := map[v1alpha1.ConfigOption]v1alpha1.ConfigOption{}
		sections := map[string][]string{}
		for _, cur := range slices.SortedFunc(maps.Keys(byOption), byName) {
			if s := slices.SortedFunc(slices.Values(byOption[cur]), byName); round < len(s) {
				spelling[cur] = s[round]
				sections[cur.Section] = append(sections[cur.Section], cur.Key)
			}
		}
		if len(spelling) == 0 {
			break
		}
		py := startReader(t, py, script)
		var planned struct {
			Values  map[string]map[string]string `json:"values"`
			Unknown [][3]string                  `json:"unknown"`
		}
		py.ask(t, map[string]any{"sections": sections, "store": catalogStore, "storeOptions": []string{}, "fixed": fixed}, &planned)
		for _, u := range planned.Unknown {
			t.Errorf("%s: [%s] %s, which a deprecated spelling sets, is not registered: %s", scan.Release, u[0], u[1], u[2])
		}
		set := map[string]map[string]string{}
		put := func(s, k, v string) {
			if set[s] == nil {
				set[s] = map[string]string{}
			}
			set[s][k] = v
		}
		for s, kv := range fixed {
			for k, v := range kv {
				put(s, k, v)
			}
		}
		values := map[string]map[string]string{}
		for cur, sp := range spelling {
			v, ok := planned.Values[cur.Section][cur.Key]
			if !ok {
				continue
			}
			if upper && sp.Section != "DEFAULT" {
				sp.Section = strings.ToUpper(sp.Section)
				spelling[cur] = sp
			}
			put(sp.Section, sp.Key, v)
			if values[cur.Section] == nil {
				values[cur.Section] = map[string]string{}
			}
			values[cur.Section][cur.Key] = v
		}
		f := &oslo.File{Header: []string{"deprecated spellings of " + scan.Release + ", round " + fmt.Sprint(round), "upper-cased sections: " + fmt.Sprint(upper)}}
		for _, s := range append([]string{"DEFAULT"}, slices.DeleteFunc(slices.Sorted(maps.Keys(set)), func(s string) bool { return s == "DEFAULT" })...) {
			sec := oslo.Section{Name: s}
			for _, k := range slices.Sorted(maps.Keys(set[s])) {
				sec.Set(k, set[s][k])
			}
			f.Sections = append(f.Sections, sec)
		}
		path := writeConf(t, f)
		var got map[string]map[string]struct{ Want, Got, From string }
		py.ask(t, map[string]any{"file": path, "values": values}, &got)
		py.close()
		// oslo.config names the file a value came from by the section as
		// the file spells it, so a folded section's value may come from a
		// user file it does not name.
		for cur, sp := range spelling {
			r, ok := got[cur.Section][cur.Key]
			fromFile := r.From == "user "+path || (upper && sp.Section != "DEFAULT" && r.From == "user ")
			if !ok || r.Got != r.Want || !fromFile {
				t.Errorf("%s: [%s] %s in a file: oslo.config read [%s] %s as %s (from: %s), want %s from the file",
					scan.Release, sp.Section, sp.Key, cur.Section, cur.Key, r.Got, r.From, r.Want)
				continue
			}
			read++
		}
	}
	if read != 2*len(scan.Deprecated) {
		t.Errorf("%s: %d deprecated spellings read back (each twice), %d scanned", scan.Release, read, len(scan.Deprecated))
	}
	t.Logf("%s: %d deprecated spellings of %d options read back from a file, in sections spelt as folded and upper-cased", scan.Release, read/2, len(byOption))
}

// reader is catalog_read.py running, asked one JSON line at a time.
type reader struct {
	suite  string
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  *bufio.Scanner
	stderr *bytes.Buffer
}

func startReader(t *testing.T, py testenv.Python, script string) *reader {
	t.Helper()
	r := &reader{suite: py.Suite, cmd: withNamespaces(t, py.Command(script)), stderr: &bytes.Buffer{}}
	var err error
	if r.stdin, err = r.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := r.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	r.cmd.Stderr = r.stderr
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.close)
	r.lines = bufio.NewScanner(stdout)
	r.lines.Buffer(nil, 64<<20)
	return r
}

func (r *reader) ask(t *testing.T, req, resp any) {
	t.Helper()
	b, _ := json.Marshal(req)
	if _, err := r.stdin.Write(append(b, '\n')); err != nil {
		t.Fatalf("%s: %v", r.suite, err)
	}
	if !r.lines.Scan() {
		_ = r.cmd.Wait()
		t.Fatalf("%s: catalog_read.py answered nothing: %v\n%s", r.suite, r.lines.Err(), r.stderr)
	}
	if err := json.Unmarshal(r.lines.Bytes(), resp); err != nil {
		t.Fatalf("%s: %v: %s", r.suite, err, r.lines.Bytes())
	}
}

func (r *reader) close() {
	if r.cmd.Process != nil && r.cmd.ProcessState == nil {
		_ = r.stdin.Close()
		_ = r.cmd.Wait()
	}
}
