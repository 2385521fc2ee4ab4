package glancekrm

import (
	"strings"
	"testing"

	"github.com/kptdev/krm-functions-sdk/go/fn"
)

// TestGlancesNamedLikeEachOthersObjects: a Glance named like an object
// another Glance of its namespace generates (its API's Deployment and
// Service, its jobs' NetworkPolicy) is refused, both Glances named.
func TestGlancesNamedLikeEachOthersObjects(t *testing.T) {
	named := func(name string) string { return strings.Replace(testGlance, "name: glance,", "name: "+name+",", 1) }
	for name, c := range map[string]struct {
		input string
		clash string
	}{
		"an API's Deployment is another Glance's": {
			input: docs(testGlance+"  apis: [{name: default}, {name: internal}]\n", testBackend("a", "glance", true),
				named("glance-internal"), testBackend("b", "glance-internal", true)),
			clash: "Deployment glance-internal",
		},
		"the jobs' NetworkPolicy is another Glance's": {
			input: docs(testGlance+"  networkPolicy: {ingress: [{namespaceSelector: {}}]}\n", testBackend("a", "glance", true),
				named("glance-jobs")+"  networkPolicy: {ingress: [{namespaceSelector: {}}]}\n", testBackend("b", "glance-jobs", true)),
			clash: "NetworkPolicy glance-jobs",
		},
		"no clash": {
			input: docs(testGlance, testBackend("a", "glance", true), named("glance-two"), testBackend("b", "glance-two", true)),
		},
	} {
		t.Run(name, func(t *testing.T) {
			out, failed := runFn(t, resourceList(t, []byte(c.input)))
			rl, err := fn.ParseResourceList(out)
			if err != nil {
				t.Fatal(err)
			}
			lines := resultLines(rl.Results)
			if c.clash == "" {
				if failed {
					t.Fatalf("failed:\n%s", lines)
				}
				return
			}
			if !failed {
				t.Fatalf("two Glances rendering %s passed:\n%s", c.clash, lines)
			}
			if strings.Count(lines, "both render "+c.clash) != 2 {
				t.Errorf("want one error on each Glance naming %s:\n%s", c.clash, lines)
			}
		})
	}
}
