package glancekrm

import (
	"fmt"

	"github.com/c5c3/glance-krm/fn/findings"
	"github.com/c5c3/glance-krm/fn/glancekrm/workload"
)

// clashes refuses two Glances whose rendered or generated objects share
// an identity: each Glance's names derive from its own (<glance>-<api>,
// <glance>-jobs, <glance>-store-drain, ...), so a Glance named like
// another's generated object (glance-internal beside glance with an API
// internal) would make both write one object, and whichever the engine
// applies last would win. Both Glances get an error naming the object
// and the other Glance.
func clashes(glances []*glanceEntry, outs []output) []findings.Finding {
	owner := map[string]int{}
	var results []findings.Finding
	reported := map[[2]int]bool{}
	for i, out := range outs {
		for _, o := range out.added {
			id := workload.Identity(o.GetAPIVersion(), o.GetKind(), o.GetNamespace(), o.GetName())
			j, seen := owner[id]
			if !seen {
				owner[id] = i
				continue
			}
			if j == i || reported[[2]int{j, i}] {
				continue
			}
			reported[[2]int{j, i}] = true
			for _, pair := range [][2]int{{j, i}, {i, j}} {
				ge, other := glances[pair[0]], glances[pair[1]]
				results = append(results, findings.About(ge.obj, findings.Error, "generated-names-unique", fmt.Sprintf(
					"Glance %s and Glance %s both render %s %s (the names glance-krm derives from one Glance's name are another's): rename one of the Glances",
					ge, other, o.GetKind(), o.GetName())))
			}
		}
	}
	return results
}
