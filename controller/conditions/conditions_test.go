package conditions

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestApply(t *testing.T) {
	earlier := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	current := []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue, Reason: "AllReady", Message: "fine", ObservedGeneration: 1, LastTransitionTime: earlier}}
	cases := map[string]struct {
		generation int64
		apply      Condition
		changed    bool
		transition bool // lastTransitionTime moved
		want       metav1.Condition
	}{
		"the same verdict: nothing to write": {
			generation: 1, apply: Condition{Type: "Ready", OK: true, Reason: "AllReady", Message: "fine"},
			want: current[0],
		},
		"a new message, same status: written, no transition": {
			generation: 1, apply: Condition{Type: "Ready", OK: true, Reason: "AllReady", Message: "finer"}, changed: true,
			want: metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue, Reason: "AllReady", Message: "finer", ObservedGeneration: 1, LastTransitionTime: earlier},
		},
		"a new generation, same verdict: written": {
			generation: 2, apply: Condition{Type: "Ready", OK: true, Reason: "AllReady", Message: "fine"}, changed: true,
			want: metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue, Reason: "AllReady", Message: "fine", ObservedGeneration: 2, LastTransitionTime: earlier},
		},
		"a flip: written, transition moves": {
			generation: 1, apply: Condition{Type: "Ready", Reason: "NotAllReady", Message: "no"}, changed: true, transition: true,
			want: metav1.Condition{Type: "Ready", Status: metav1.ConditionFalse, Reason: "NotAllReady", Message: "no", ObservedGeneration: 1},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			in := []metav1.Condition{*current[0].DeepCopy()}
			next, changed := Apply(in, tc.generation, tc.apply)
			if changed != tc.changed {
				t.Errorf("changed = %v, want %v", changed, tc.changed)
			}
			if d := cmp.Diff(current, in); d != "" {
				t.Errorf("Apply changed its input:\n%s", d)
			}
			got := next[0]
			if moved := !got.LastTransitionTime.Equal(&earlier); moved != tc.transition {
				t.Errorf("lastTransitionTime moved = %v, want %v", moved, tc.transition)
			}
			if tc.transition {
				got.LastTransitionTime = metav1.Time{}
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

func TestObserved(t *testing.T) {
	conds := []metav1.Condition{
		{Type: "CredentialsReady", Status: metav1.ConditionTrue, Reason: "CredentialsAvailable", Message: "ok", ObservedGeneration: 3},
		{Type: "ConfigProjected", Status: metav1.ConditionFalse, Reason: "WaitingForProjection", Message: "not yet", ObservedGeneration: 3},
	}
	cases := map[string]struct {
		typ        string
		generation int64
		want       Condition
	}{
		"True for this generation":  {"CredentialsReady", 3, Condition{Type: "CredentialsReady", OK: true, Reason: "CredentialsAvailable", Message: "ok"}},
		"False for this generation": {"ConfigProjected", 3, Condition{Type: "ConfigProjected", Reason: "WaitingForProjection", Message: "not yet"}},
		"True for an older generation is not observed": {"CredentialsReady", 4,
			Condition{Type: "CredentialsReady", Reason: NotObserved, Message: "CredentialsReady has not been reported for this generation yet"}},
		"absent": {"Ready", 3, Condition{Type: "Ready", Reason: NotObserved, Message: "Ready has not been reported for this generation yet"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if d := cmp.Diff(tc.want, Observed(conds, tc.typ, tc.generation)); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}
