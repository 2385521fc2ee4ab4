package glance

import (
	"fmt"
	"slices"
	"strings"

	"github.com/c5c3/glance-krm/controller/conditions"
	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

// Pending is a backend that is not credential-ready and projected, with
// the reason and message of the first condition that says why.
type Pending struct {
	Backend         *v1alpha1.GlanceBackend
	Reason, Message string
}

// Aggregation is a Glance's BackendsReady verdict on its backends.
type Aggregation struct {
	Condition conditions.Condition
	Pending   []Pending
	// Unjudged: a backend has no verdict for its current generation yet
	// (just created, or its spec just changed). Its verdict, a moment
	// away, brings the Glance back; writing the transient state would
	// cost a status write per Glance.
	Unjudged bool
	// DefaultWaiting: the condition says NoDefaultBackend only because
	// the one backend marked isDefault is not credential-ready yet; its
	// credentials arriving resolves it (Ready reads it as in progress).
	DefaultWaiting bool
}

// Aggregate judges a Glance (namespace/name, for messages) on its
// backends' conditions. The exactly-one rule counts credential-ready
// defaults only: a default whose credentials are missing is no default.
func Aggregate(glance string, backends []v1alpha1.GlanceBackend) Aggregation {
	backends = slices.Clone(backends)
	slices.SortFunc(backends, func(a, b v1alpha1.GlanceBackend) int { return strings.Compare(a.Name, b.Name) })
	var credentialReady []*v1alpha1.GlanceBackend
	var out Aggregation
	for i := range backends {
		b := &backends[i]
		cred := conditions.Observed(b.Status.Conditions, v1alpha1.ConditionCredentialsReady, b.Generation)
		proj := conditions.Observed(b.Status.Conditions, v1alpha1.ConditionConfigProjected, b.Generation)
		switch {
		case !cred.OK:
			out.Pending = append(out.Pending, Pending{b, cred.Reason, cred.Message})
		case !proj.OK:
			credentialReady = append(credentialReady, b)
			out.Pending = append(out.Pending, Pending{b, proj.Reason, proj.Message})
		default:
			credentialReady = append(credentialReady, b)
		}
	}
	out.Unjudged = slices.ContainsFunc(out.Pending, func(p Pending) bool { return p.Reason == conditions.NotObserved })

	c := conditions.Condition{Type: v1alpha1.ConditionBackendsReady}
	list := pendingList(out.Pending)
	defaultStore, err := v1alpha1.DefaultBackend(glance, credentialReady)
	switch {
	case err != nil:
		c.Reason = v1alpha1.ReasonNoDefaultBackend
		c.Message = "counting credential-ready backends only: " + err.Error() + list
		all := make([]*v1alpha1.GlanceBackend, len(backends))
		for i := range backends {
			all[i] = &backends[i]
		}
		_, whole := v1alpha1.DefaultBackend(glance, all)
		out.DefaultWaiting = whole == nil
	case len(out.Pending) > 0:
		c.Reason = v1alpha1.ReasonWaitingForBackends
		c.Message = fmt.Sprintf("default store %q is valid%s", defaultStore, list)
	default:
		c.OK, c.Reason = true, v1alpha1.ReasonAllBackendsProjected
		c.Message = fmt.Sprintf("%d backends credential-ready and projected; default store %q", len(backends), defaultStore)
	}
	out.Condition = c
	return out
}

// pendingPrefix starts the list of pending backends in BackendsReady's
// message: "; pending: <name> (<reason>), ...". pendingIn reads it back.
const pendingPrefix = "; pending: "

func pendingList(ps []Pending) string {
	if len(ps) == 0 {
		return ""
	}
	names := make([]string, len(ps))
	for i, p := range ps {
		names[i] = fmt.Sprintf("%s (%s)", p.Backend.Name, p.Reason)
	}
	return pendingPrefix + strings.Join(names, ", ")
}
