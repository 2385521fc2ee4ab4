package testenv

import (
	"strings"
	"testing"
)

func TestTallyLines(t *testing.T) {
	var ts Tally
	ts.Record("2026.1", true)
	ts.Record("2026.1", true)
	ts.Record("2026.1", false)
	ts.Record("Argo CD, 2025.1", true)
	ts.Record("", true) // counted in the total only
	var b strings.Builder
	if !ts.Print(&b) {
		t.Error("a failed check: Print must say so")
	}
	want := "2026.1: 2 passed, 1 failed\nArgo CD, 2025.1: 1 passed, 0 failed\ntotal: 4 passed, 1 failed\n"
	if b.String() != want {
		t.Errorf("Print wrote\n%s\nwant\n%s", b.String(), want)
	}
	var clean Tally
	clean.Record("x", true)
	if clean.Print(&strings.Builder{}) {
		t.Error("no failed check: Print must not report one")
	}
}

func TestTallyCheckCounts(t *testing.T) {
	var ts Tally
	if !ts.Check(t, "r", "passes", func(*testing.T) {}) {
		t.Fatal("a passing check reported failed")
	}
	if ts.counts["r"][0] != 1 {
		t.Errorf("counts %v, want one passed under r", ts.counts["r"])
	}
}

// A failed check's reason reaches the summary's end, its own and its
// subtests' but no sibling's that shares its prefix.
func TestTallyWhy(t *testing.T) {
	recordFailure("TestX/rel/check", "Application glance Degraded: health Progressing")
	recordFailure("TestX/rel/check/inner", "inner timed out")
	recordFailure("TestX/rel/checkmate", "a sibling's")
	var ts Tally
	ts.Record("r", false)
	ts.Why("r", "check", lastFailure("TestX/rel/check"))
	ts.Why("r", "silent", "")
	var b strings.Builder
	ts.Print(&b)
	want := "r: 0 passed, 1 failed\ntotal: 0 passed, 1 failed\n" +
		"failed: r / check:\n    Application glance Degraded: health Progressing\n    inner timed out\n"
	if b.String() != want {
		t.Errorf("Print wrote\n%s\nwant\n%s", b.String(), want)
	}
	if got := clip(strings.Repeat("l\n", 30), 25, 3000); strings.Count(got, "\n") != 25 || !strings.HasSuffix(got, "…") {
		t.Errorf("clip kept %q", got)
	}
}
