// Package conditions writes status conditions the way the contract wants
// them: observedGeneration set, lastTransitionTime moved only when a
// condition's status flips, and nothing written when nothing changed.
package conditions

import (
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Condition is one verdict before it is stamped with a generation.
type Condition struct {
	Type    string
	OK      bool
	Reason  string
	Message string
}

// Apply sets each condition on a copy of current and tells whether the
// result differs from current, compared semantically.
// meta.SetStatusCondition keeps lastTransitionTime when the status stays.
func Apply(current []metav1.Condition, generation int64, conds ...Condition) ([]metav1.Condition, bool) {
	next := make([]metav1.Condition, len(current))
	for i := range current {
		current[i].DeepCopyInto(&next[i])
	}
	for _, c := range conds {
		status := metav1.ConditionFalse
		if c.OK {
			status = metav1.ConditionTrue
		}
		meta.SetStatusCondition(&next, metav1.Condition{
			Type: c.Type, Status: status, Reason: c.Reason, Message: c.Message, ObservedGeneration: generation,
		})
	}
	return next, !equality.Semantic.DeepEqual(current, next)
}

// NotObserved stands for a condition not reported for the current
// generation yet.
const NotObserved = "NotObserved"

// Observed is the condition of this type as reported for the given
// generation, or one with reason NotObserved when it is absent or
// describes an older generation.
func Observed(conds []metav1.Condition, typ string, generation int64) Condition {
	c := meta.FindStatusCondition(conds, typ)
	if c == nil || c.ObservedGeneration != generation {
		return Condition{Type: typ, Reason: NotObserved, Message: typ + " has not been reported for this generation yet"}
	}
	return Condition{Type: typ, OK: c.Status == metav1.ConditionTrue, Reason: c.Reason, Message: c.Message}
}
