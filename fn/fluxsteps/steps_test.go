package fluxsteps

import (
	"strings"
	"testing"
)

// TestFluxStep: a wave goes to its folder; a wave before the first to
// the first, after the last to the last; no wave (or one Argo CD reads
// as 0) to the first.
func TestFluxStep(t *testing.T) {
	for w, want := range map[string]int{"": 0, "-3": 0, "0": 0, "1": 1, "2": 2, "7": 2, "x": 0} {
		a := map[string]string{}
		if w != "" {
			a["argocd.argoproj.io/sync-wave"] = w
		}
		if got := FluxStep(a); got != want {
			t.Errorf("wave %q: step %d, want %d", w, got, want)
		}
	}
}

// TestSplitSteps: each object lands in its wave's folder byte for byte
// (comments, quoting, a block scalar holding "---" not at a line's start),
// in the stream's order; comment-only documents are dropped; what is no
// object is an error naming the document.
func TestSplitSteps(t *testing.T) {
	stream := `# a leading comment
apiVersion: apps/v1
kind: Deployment
metadata: {name: d, annotations: {argocd.argoproj.io/sync-wave: "1"}}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: a   # kept
data:
  x: |
    ---
    not a marker
---
# only a comment
---
apiVersion: v1
kind: ConfigMap
metadata: {name: b, annotations: {argocd.argoproj.io/sync-wave: '2'}}
--- # a marker with a comment
apiVersion: v1
kind: ConfigMap
metadata: {name: c}
`
	got, err := SplitSteps([]byte(stream))
	if err != nil {
		t.Fatal(err)
	}
	want := [3]string{
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a   # kept\ndata:\n  x: |\n    ---\n    not a marker\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n",
		"# a leading comment\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d, annotations: {argocd.argoproj.io/sync-wave: \"1\"}}\n",
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b, annotations: {argocd.argoproj.io/sync-wave: '2'}}\n",
	}
	for i := range want {
		if string(got[i]) != want[i] {
			t.Errorf("folder %s:\n%s\nwant:\n%s", FluxSteps[i], got[i], want[i])
		}
	}
	for _, bad := range []string{"- a\n- b\n", "apiVersion: v1\nmetadata: {name: x}\n", "a: [\n"} {
		if _, err := SplitSteps([]byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ok}\n---\n" + bad)); err == nil || !strings.Contains(err.Error(), "document 2") {
			t.Errorf("%q: err %v, want one naming document 2", bad, err)
		}
	}
}

// TestKeepHistoryRefusesWhatIsNoObject: a document that is no mapping is
// an error naming it, not the SDK ending the process.
func TestKeepHistoryRefusesWhatIsNoObject(t *testing.T) {
	ok := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ok}\n---\n"
	for _, c := range []struct{ prev, cur string }{{"", ok + "- a\n"}, {ok + "just text\n", ok}} {
		if _, err := KeepHistory([]byte(c.prev), []byte(c.cur)); err == nil || !strings.Contains(err.Error(), "document 2 is not a Kubernetes object") {
			t.Errorf("%q after %q: err %v", c.cur, c.prev, err)
		}
	}
}
