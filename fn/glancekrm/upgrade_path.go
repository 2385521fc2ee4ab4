package glancekrm

import (
	"github.com/c5c3/glance-krm/fn/findings"
	"github.com/c5c3/glance-krm/fn/glancekrm/history"
	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

// checkUpgradePath: under kpt the package keeps the previous render, so
// the release it was rendered for is known (the newest rendered copy's
// AnnotationRelease), and a change of spec.openStackRelease from it is
// judged as explain judges it: a downgrade, or a
// skip other than SLURP to SLURP, is refused. Under kustomize the input
// holds no previous render (a copy there comes from a base of the same
// build), so there is nothing to judge; explain judges the change in
// review.
func checkUpgradePath(inv *inventory, ge *glanceEntry) ([]findings.Finding, bool) {
	if inv.stateless {
		return nil, true
	}
	g := ge.g
	previous := ""
	newest := -1
	for _, c := range inv.copies[history.Key{Namespace: g.Namespace, Glance: g.Name, Component: v1alpha1.ComponentConfig, Kind: "ConfigMap"}] {
		if rel := c.GetAnnotation(v1alpha1.AnnotationRelease); rel != "" && history.RevisionOf(c) > newest {
			previous, newest = rel, history.RevisionOf(c)
		}
	}
	reason, problem := v1alpha1.Problem(previous, g.Spec.OpenStackRelease)
	if problem == "" {
		return nil, true
	}
	r := findings.About(ge.obj, findings.Error, "upgrade-path", problem+" (the package's previous render is for "+previous+
		"; to start over from another release, delete the package's rendered copies)")
	return []findings.Finding{r.At("spec.openStackRelease").Because(reason)}, false
}
