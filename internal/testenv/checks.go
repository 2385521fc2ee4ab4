package testenv

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
)

// Tally is the real-peer suites' one harness for named checks (the chroot
// matrix, the node's kubectl door, drain and engines): each check is a
// subtest counted under a label (a release, or an engine and release), and
// the run ends with one "label: N passed, M failed" line per label and a
// total, the lines CI logs and the closing notes quote. Labels run side
// by side, so the counts are guarded.
type Tally struct {
	mu     sync.Mutex
	counts map[string]*[2]int // label → passed, failed
	// why the failed checks failed, in the order they did: CI keeps the
	// end of a run's output, where the tally is, not the middle, where a
	// check's own failure was logged.
	whys []string
}

// Check runs one named check as a subtest of t and counts it under label
// ("" counts in the total only: a check of no release). A failed check's
// last Eventually error goes into the tally's summary.
func (ts *Tally) Check(t *testing.T, label, name string, f func(*testing.T)) bool {
	var sub string
	ok := t.Run(name, func(t *testing.T) {
		sub = t.Name()
		f(t)
	})
	ts.Record(label, ok)
	if !ok {
		ts.Why(label, name, lastFailure(sub))
	}
	return ok
}

// Why adds what a failed check's label and name cannot say (its last
// error, what the cluster showed then) to the summary.
func (ts *Tally) Why(label, name, why string) {
	if why == "" {
		return
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	ts.whys = append(ts.whys, fmt.Sprintf("%s / %s:\n%s", label, name, indent(clip(why, 25, 3000))))
}

// failures is each test's last Eventually error, by test name.
var failures sync.Map

func recordFailure(test, why string) { failures.Store(test, why) }

// lastFailure is the Eventually errors of the test named and its
// subtests.
func lastFailure(name string) string {
	var out []string
	failures.Range(func(k, v any) bool {
		if n := k.(string); n == name || strings.HasPrefix(n, name+"/") {
			out = append(out, v.(string))
		}
		return true
	})
	sort.Strings(out)
	return strings.Join(out, "\n")
}

// clip keeps a summary readable: its first lines, its first bytes.
func clip(s string, lines, size int) string {
	if l := strings.Split(s, "\n"); len(l) > lines {
		s = strings.Join(l[:lines], "\n") + "\n…"
	}
	if len(s) > size {
		s = s[:size] + "…"
	}
	return s
}

func indent(s string) string {
	return "    " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n    ")
}

// Record counts one check's outcome under label.
func (ts *Tally) Record(label string, ok bool) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.counts == nil {
		ts.counts = map[string]*[2]int{}
	}
	c := ts.counts[label]
	if c == nil {
		c = &[2]int{}
		ts.counts[label] = c
	}
	if ok {
		c[0]++
	} else {
		c[1]++
	}
}

// Print writes a line per label, sorted, then the total; true when a check
// failed.
func (ts *Tally) Print(w io.Writer) bool {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	labels := make([]string, 0, len(ts.counts))
	for k := range ts.counts {
		labels = append(labels, k)
	}
	sort.Strings(labels)
	var passed, failed int
	for _, k := range labels {
		c := ts.counts[k]
		if k != "" {
			fmt.Fprintf(w, "%s: %d passed, %d failed\n", k, c[0], c[1])
		}
		passed, failed = passed+c[0], failed+c[1]
	}
	fmt.Fprintf(w, "total: %d passed, %d failed\n", passed, failed)
	for _, why := range ts.whys {
		fmt.Fprintf(w, "failed: %s\n", why)
	}
	return failed > 0
}

// Main is a suite's TestMain: it runs the tests, prints the tally, and
// exits non-zero when a check failed even if no test did (a check whose
// failure another path recovered from still counts).
func (ts *Tally) Main(m *testing.M) {
	code := m.Run()
	if ts.Print(os.Stdout) && code == 0 {
		code = 1
	}
	os.Exit(code)
}
