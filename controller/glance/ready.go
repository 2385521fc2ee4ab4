package glance

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/c5c3/glance-krm/controller/conditions"
	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

// failures are the reasons of a condition that says the Glance failed:
// a change to it (or to its backends) is needed, waiting does not help.
// Every other False reason is work in progress (DBSyncInProgress,
// WaitingForBackends, DrainInProgress, NotObserved).
var failures = []string{
	v1alpha1.ReasonNoDefaultBackend,
	v1alpha1.ReasonUpgradePathInvalid,
	v1alpha1.ReasonDowngradeNotSupported,
	v1alpha1.ReasonDrainFailed,
}

// parts are the conditions Ready aggregates, in the order its message
// names them. BackendsReady is always needed; the others count once
// written (DatabaseReady once a glance-manage Job completed,
// StoresDrained once a drain was asked for).
var parts = []string{v1alpha1.ConditionBackendsReady, v1alpha1.ConditionDatabaseReady, v1alpha1.ConditionStoresDrained}

// Readiness is the Glance's aggregate, by kstatus's conventions: Ready
// True only when every part holds for the current generation; while not,
// Stalled when a part failed (its reason and message), else Reconciling
// (the first part in progress). The one of Stalled and Reconciling that
// does not hold is not written (abnormal-true conditions).
type Readiness struct {
	Ready       conditions.Condition
	Abnormal    *conditions.Condition // Stalled or Reconciling, nil when Ready
	NotAbnormal []string              // the condition types to remove
}

// Judge reads the parts off the conditions (as they are about to be
// written) for this generation. defaultWaiting: BackendsReady's
// NoDefaultBackend only says that the one default store waits for its
// credentials (Aggregation.DefaultWaiting), which their arrival fixes:
// work in progress (Ready's reason WaitingForCredentials), not a failure.
func Judge(conds []metav1.Condition, generation int64, defaultWaiting bool) Readiness {
	var failed, pending []string
	var failReason, pendReason string
	for _, typ := range parts {
		c := meta.FindStatusCondition(conds, typ)
		switch {
		case c == nil && typ != v1alpha1.ConditionBackendsReady:
			continue
		case c == nil || c.ObservedGeneration != generation:
			pending = append(pending, typ+" has not been judged for this generation yet")
			pendReason = firstOf(pendReason, conditions.NotObserved)
		case c.Status == metav1.ConditionTrue:
			continue
		case typ == v1alpha1.ConditionBackendsReady && c.Reason == v1alpha1.ReasonNoDefaultBackend && defaultWaiting:
			pending = append(pending, fmt.Sprintf("%s is False (%s): %s", typ, c.Reason, c.Message))
			pendReason = firstOf(pendReason, v1alpha1.ReasonWaitingForCredentials)
		case slices.Contains(failures, c.Reason):
			failed = append(failed, fmt.Sprintf("%s is False (%s): %s", typ, c.Reason, c.Message))
			failReason = firstOf(failReason, c.Reason)
		default:
			pending = append(pending, fmt.Sprintf("%s is False (%s): %s", typ, c.Reason, c.Message))
			pendReason = firstOf(pendReason, c.Reason)
		}
	}
	r := Readiness{Ready: conditions.Condition{Type: v1alpha1.ConditionReady}}
	switch {
	case len(failed) > 0:
		msg := strings.Join(append(failed, pending...), "; ")
		r.Ready.Reason, r.Ready.Message = failReason, msg
		r.Abnormal = &conditions.Condition{Type: v1alpha1.ConditionStalled, OK: true, Reason: failReason, Message: msg}
		r.NotAbnormal = []string{v1alpha1.ConditionReconciling}
	case len(pending) > 0:
		msg := strings.Join(pending, "; ")
		r.Ready.Reason, r.Ready.Message = pendReason, msg
		r.Abnormal = &conditions.Condition{Type: v1alpha1.ConditionReconciling, OK: true, Reason: pendReason, Message: msg}
		r.NotAbnormal = []string{v1alpha1.ConditionStalled}
	default:
		r.Ready.OK, r.Ready.Reason = true, v1alpha1.ReasonAllReady
		var held []string
		for _, typ := range parts {
			if meta.FindStatusCondition(conds, typ) != nil {
				held = append(held, typ)
			}
		}
		r.Ready.Message = strings.Join(held, ", ") + " hold"
		r.NotAbnormal = []string{v1alpha1.ConditionStalled, v1alpha1.ConditionReconciling}
	}
	return r
}

func firstOf(cur, next string) string {
	if cur != "" {
		return cur
	}
	return next
}
