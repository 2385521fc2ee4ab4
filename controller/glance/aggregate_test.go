package glance

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/c5c3/glance-krm/controller/conditions"
	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

// judged is a backend whose conditions say cred and proj for its current
// generation ("" leaves a condition out: not judged yet).
func judged(name string, isDefault bool, cred, proj string) v1alpha1.GlanceBackend {
	b := v1alpha1.GlanceBackend{ObjectMeta: metav1.ObjectMeta{Namespace: "openstack", Name: name, Generation: 2}}
	b.Spec.GlanceRef.Name, b.Spec.IsDefault = "glance", isDefault
	for typ, reason := range map[string]string{v1alpha1.ConditionCredentialsReady: cred, v1alpha1.ConditionConfigProjected: proj} {
		if reason == "" {
			continue
		}
		status := metav1.ConditionFalse
		if reason == v1alpha1.ReasonCredentialsAvailable || reason == v1alpha1.ReasonConfigProjected {
			status = metav1.ConditionTrue
		}
		b.Status.Conditions = append(b.Status.Conditions, metav1.Condition{Type: typ, Status: status, Reason: reason, Message: "why " + name, ObservedGeneration: 2})
	}
	return b
}

func TestAggregate(t *testing.T) {
	const ok, proj = v1alpha1.ReasonCredentialsAvailable, v1alpha1.ReasonConfigProjected
	type want struct {
		OK       bool
		Reason   string
		Message  string
		Pending  []string // name (reason)
		Unjudged bool
		// DefaultWaiting: NoDefaultBackend only because the one default
		// is not credential-ready (Ready reads it as in progress).
		DefaultWaiting bool
	}
	cases := map[string]struct {
		backends []v1alpha1.GlanceBackend
		want     want
	}{
		"all projected, one default": {
			backends: []v1alpha1.GlanceBackend{judged("b", false, ok, proj), judged("a", true, ok, proj)},
			want:     want{OK: true, Reason: v1alpha1.ReasonAllBackendsProjected, Message: `2 backends credential-ready and projected; default store "a"`},
		},
		"a backend waits for credentials": {
			backends: []v1alpha1.GlanceBackend{judged("a", true, ok, proj), judged("b", false, v1alpha1.ReasonWaitingForCredentials, proj)},
			want: want{Reason: v1alpha1.ReasonWaitingForBackends, Message: `default store "a" is valid; pending: b (WaitingForCredentials)`,
				Pending: []string{"b (WaitingForCredentials)"}},
		},
		"a backend waits for projection": {
			backends: []v1alpha1.GlanceBackend{judged("a", true, ok, proj), judged("b", false, ok, v1alpha1.ReasonWaitingForProjection)},
			want: want{Reason: v1alpha1.ReasonWaitingForBackends, Message: `default store "a" is valid; pending: b (WaitingForProjection)`,
				Pending: []string{"b (WaitingForProjection)"}},
		},
		"two defaults": {
			backends: []v1alpha1.GlanceBackend{judged("a", true, ok, proj), judged("b", true, ok, proj)},
			want: want{Reason: v1alpha1.ReasonNoDefaultBackend,
				Message: `counting credential-ready backends only: NoDefaultBackend: GlanceBackends "a", "b" attached to the same Glance "openstack/glance" are all marked isDefault; exactly one default store is allowed`},
		},
		"the only default has no credentials: no default": {
			backends: []v1alpha1.GlanceBackend{judged("a", true, v1alpha1.ReasonWaitingForCredentials, proj), judged("b", false, ok, proj)},
			want: want{Reason: v1alpha1.ReasonNoDefaultBackend, Pending: []string{"a (WaitingForCredentials)"}, DefaultWaiting: true,
				Message: `counting credential-ready backends only: NoDefaultBackend: no GlanceBackend attached to Glance "openstack/glance" is marked isDefault; exactly one default store is allowed; pending: a (WaitingForCredentials)`},
		},
		"no backend marked default": {
			backends: []v1alpha1.GlanceBackend{judged("a", false, v1alpha1.ReasonWaitingForCredentials, proj), judged("b", false, ok, proj)},
			want: want{Reason: v1alpha1.ReasonNoDefaultBackend, Pending: []string{"a (WaitingForCredentials)"},
				Message: `counting credential-ready backends only: NoDefaultBackend: no GlanceBackend attached to Glance "openstack/glance" is marked isDefault; exactly one default store is allowed; pending: a (WaitingForCredentials)`},
		},
		"a default without projection still counts": {
			backends: []v1alpha1.GlanceBackend{judged("a", true, ok, v1alpha1.ReasonWaitingForProjection)},
			want: want{Reason: v1alpha1.ReasonWaitingForBackends, Message: `default store "a" is valid; pending: a (WaitingForProjection)`,
				Pending: []string{"a (WaitingForProjection)"}},
		},
		"a backend not judged yet": {
			backends: []v1alpha1.GlanceBackend{judged("a", true, ok, proj), judged("b", false, "", "")},
			want: want{Reason: v1alpha1.ReasonWaitingForBackends, Message: `default store "a" is valid; pending: b (NotObserved)`,
				Pending: []string{"b (NotObserved)"}, Unjudged: true},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			a := Aggregate("openstack/glance", tc.backends)
			got := want{OK: a.Condition.OK, Reason: a.Condition.Reason, Message: a.Condition.Message, Unjudged: a.Unjudged, DefaultWaiting: a.DefaultWaiting}
			for _, p := range a.Pending {
				got.Pending = append(got.Pending, p.Backend.Name+" ("+p.Reason+")")
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
			if a.Condition.Type != v1alpha1.ConditionBackendsReady {
				t.Errorf("condition type %q", a.Condition.Type)
			}
		})
	}
}

// TestPendingReadBack: what Aggregate writes into the message, pendingIn
// reads back, so a restart does not repeat a warning.
func TestPendingReadBack(t *testing.T) {
	a := Aggregate("openstack/glance", []v1alpha1.GlanceBackend{
		judged("a", true, v1alpha1.ReasonCredentialsAvailable, v1alpha1.ReasonConfigProjected),
		judged("b", false, v1alpha1.ReasonWaitingForCredentials, ""),
		judged("c", false, v1alpha1.ReasonCredentialsAvailable, v1alpha1.ReasonWaitingForProjection),
	})
	conds, _ := conditions.Apply(nil, 1, a.Condition)
	want := map[string]string{"b": v1alpha1.ReasonWaitingForCredentials, "c": v1alpha1.ReasonWaitingForProjection}
	if d := cmp.Diff(want, pendingIn(conds)); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}
