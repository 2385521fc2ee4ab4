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
