package testenv

import (
	"fmt"
	"io"
	"os"
	"sort"
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
}

// Check runs one named check as a subtest of t and counts it under label
// ("" counts in the total only: a check of no release).
func (ts *Tally) Check(t *testing.T, label, name string, f func(*testing.T)) bool {
	ok := t.Run(name, f)
	ts.Record(label, ok)
	return ok
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
