package glance

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/c5c3/glance-krm/controller/conditions"
	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

func cond(typ string, ok bool, reason string, gen int64) metav1.Condition {
	s := metav1.ConditionFalse
	if ok {
		s = metav1.ConditionTrue
	}
	return metav1.Condition{Type: typ, Status: s, Reason: reason, Message: reason + " message", ObservedGeneration: gen}
}

// TestJudge: Ready is True only when every part written holds for this
// generation; a failure reason makes it Stalled (whatever else is in
// progress), any other False reason or a part not judged for this
// generation Reconciling.
func TestJudge(t *testing.T) {
	backends := func(ok bool, reason string) metav1.Condition {
		return cond(v1alpha1.ConditionBackendsReady, ok, reason, 2)
	}
	db := func(ok bool, reason string) metav1.Condition {
		return cond(v1alpha1.ConditionDatabaseReady, ok, reason, 2)
	}
	drain := func(ok bool, reason string) metav1.Condition {
		return cond(v1alpha1.ConditionStoresDrained, ok, reason, 2)
	}
	for name, tc := range map[string]struct {
		conds          []metav1.Condition
		defaultWaiting bool
		ready          bool
		reason         string
		abnormal       string // Stalled, Reconciling or ""
		says           []string
	}{
		"nothing judged yet": {reason: conditions.NotObserved, abnormal: v1alpha1.ConditionReconciling,
			says: []string{"BackendsReady has not been judged for this generation yet"}},
		"backends only, ready": {conds: []metav1.Condition{backends(true, v1alpha1.ReasonAllBackendsProjected)},
			ready: true, reason: v1alpha1.ReasonAllReady, says: []string{"BackendsReady hold"}},
		"every part ready": {conds: []metav1.Condition{backends(true, v1alpha1.ReasonAllBackendsProjected), db(true, v1alpha1.ReasonDatabaseSynced), drain(true, v1alpha1.ReasonDrainComplete)},
			ready: true, reason: v1alpha1.ReasonAllReady, says: []string{"BackendsReady, DatabaseReady, StoresDrained hold"}},
		"a part of an older generation": {conds: []metav1.Condition{backends(true, v1alpha1.ReasonAllBackendsProjected), cond(v1alpha1.ConditionDatabaseReady, true, v1alpha1.ReasonDatabaseSynced, 1)},
			reason: conditions.NotObserved, abnormal: v1alpha1.ConditionReconciling, says: []string{"DatabaseReady has not been judged for this generation yet"}},
		"db-sync running": {conds: []metav1.Condition{backends(true, v1alpha1.ReasonAllBackendsProjected), db(false, v1alpha1.ReasonDBSyncInProgress)},
			reason: v1alpha1.ReasonDBSyncInProgress, abnormal: v1alpha1.ConditionReconciling, says: []string{"DatabaseReady is False (DBSyncInProgress): DBSyncInProgress message"}},
		"no default store": {conds: []metav1.Condition{backends(false, v1alpha1.ReasonNoDefaultBackend), db(true, v1alpha1.ReasonDatabaseSynced)},
			reason: v1alpha1.ReasonNoDefaultBackend, abnormal: v1alpha1.ConditionStalled, says: []string{"BackendsReady is False (NoDefaultBackend)"}},
		"the default store waits for its credentials": {conds: []metav1.Condition{backends(false, v1alpha1.ReasonNoDefaultBackend)}, defaultWaiting: true,
			reason: v1alpha1.ReasonWaitingForCredentials, abnormal: v1alpha1.ConditionReconciling, says: []string{"BackendsReady is False (NoDefaultBackend)"}},
		"a skipped release while backends wait": {conds: []metav1.Condition{backends(false, v1alpha1.ReasonWaitingForBackends), db(false, v1alpha1.ReasonUpgradePathInvalid)},
			reason: v1alpha1.ReasonUpgradePathInvalid, abnormal: v1alpha1.ConditionStalled,
			says: []string{"DatabaseReady is False (UpgradePathInvalid)", "BackendsReady is False (WaitingForBackends)"}},
		"a downgrade": {conds: []metav1.Condition{backends(true, v1alpha1.ReasonAllBackendsProjected), db(false, v1alpha1.ReasonDowngradeNotSupported)},
			reason: v1alpha1.ReasonDowngradeNotSupported, abnormal: v1alpha1.ConditionStalled},
		"a drain running": {conds: []metav1.Condition{backends(true, v1alpha1.ReasonAllBackendsProjected), drain(false, v1alpha1.ReasonDrainInProgress)},
			reason: v1alpha1.ReasonDrainInProgress, abnormal: v1alpha1.ConditionReconciling},
		"a drain failed": {conds: []metav1.Condition{backends(true, v1alpha1.ReasonAllBackendsProjected), drain(false, v1alpha1.ReasonDrainFailed)},
			reason: v1alpha1.ReasonDrainFailed, abnormal: v1alpha1.ConditionStalled},
	} {
		t.Run(name, func(t *testing.T) {
			r := Judge(tc.conds, 2, tc.defaultWaiting)
			if r.Ready.Type != v1alpha1.ConditionReady || r.Ready.OK != tc.ready || r.Ready.Reason != tc.reason {
				t.Errorf("Ready %+v, want OK %v reason %s", r.Ready, tc.ready, tc.reason)
			}
			for _, s := range tc.says {
				if !strings.Contains(r.Ready.Message, s) {
					t.Errorf("Ready's message %q does not say %q", r.Ready.Message, s)
				}
			}
			gone := map[string]bool{v1alpha1.ConditionStalled: true, v1alpha1.ConditionReconciling: true}
			switch {
			case tc.abnormal == "" && r.Abnormal != nil:
				t.Errorf("abnormal %+v, want none", *r.Abnormal)
			case tc.abnormal != "" && (r.Abnormal == nil || r.Abnormal.Type != tc.abnormal || !r.Abnormal.OK || r.Abnormal.Reason != tc.reason || r.Abnormal.Message != r.Ready.Message):
				t.Errorf("abnormal %+v, want %s True/%s with Ready's message", r.Abnormal, tc.abnormal, tc.reason)
			case tc.abnormal != "":
				delete(gone, tc.abnormal)
			}
			for _, typ := range r.NotAbnormal {
				delete(gone, typ)
			}
			if len(gone) != 0 {
				t.Errorf("NotAbnormal %v leaves %v written", r.NotAbnormal, gone)
			}
		})
	}
}

// TestAggregateWritesReadyAndOneAbnormal walks the conditions through a
// failure, work in progress and ready: Ready always written for the
// generation, Stalled or Reconciling beside it while not ready and never
// both, neither once ready; StoresDrained gone with the last record.
func TestAggregateWritesReadyAndOneAbnormal(t *testing.T) {
	backendsOK := conditions.Condition{Type: v1alpha1.ConditionBackendsReady, OK: true, Reason: v1alpha1.ReasonAllBackendsProjected}
	steps := []struct {
		verdicts []conditions.Condition
		noDrain  bool
		ready    metav1.ConditionStatus
		abnormal string
		absent   []string
	}{
		{verdicts: []conditions.Condition{backendsOK, {Type: v1alpha1.ConditionDatabaseReady, Reason: v1alpha1.ReasonUpgradePathInvalid}}, noDrain: true,
			ready: metav1.ConditionFalse, abnormal: v1alpha1.ConditionStalled, absent: []string{v1alpha1.ConditionReconciling}},
		{verdicts: []conditions.Condition{backendsOK, {Type: v1alpha1.ConditionDatabaseReady, Reason: v1alpha1.ReasonDBSyncInProgress}, {Type: v1alpha1.ConditionStoresDrained, Reason: v1alpha1.ReasonDrainInProgress}},
			ready: metav1.ConditionFalse, abnormal: v1alpha1.ConditionReconciling, absent: []string{v1alpha1.ConditionStalled}},
		{verdicts: []conditions.Condition{backendsOK, {Type: v1alpha1.ConditionDatabaseReady, OK: true, Reason: v1alpha1.ReasonDatabaseSynced}}, noDrain: true,
			ready: metav1.ConditionTrue, absent: []string{v1alpha1.ConditionStalled, v1alpha1.ConditionReconciling, v1alpha1.ConditionStoresDrained}},
	}
	var cur []metav1.Condition
	for i, s := range steps {
		gen := int64(i + 1)
		cur = aggregate(cur, gen, s.noDrain, false, s.verdicts)
		r := meta.FindStatusCondition(cur, v1alpha1.ConditionReady)
		if r == nil || r.Status != s.ready || r.ObservedGeneration != gen {
			t.Errorf("step %d: Ready %+v, want %s at generation %d", i, r, s.ready, gen)
		}
		if s.abnormal != "" {
			if c := meta.FindStatusCondition(cur, s.abnormal); c == nil || c.Status != metav1.ConditionTrue || c.ObservedGeneration != gen {
				t.Errorf("step %d: %s %+v, want True at generation %d", i, s.abnormal, c, gen)
			}
		}
		for _, typ := range s.absent {
			if c := meta.FindStatusCondition(cur, typ); c != nil {
				t.Errorf("step %d: %s still written: %+v", i, typ, c)
			}
		}
	}
}
