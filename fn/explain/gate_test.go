package explain

import (
	"slices"
	"strings"
	"testing"
)

// TestLocationChangesStrand: a kept store whose host, scheme or bucket
// changes strands every image it holds, like a removal; a spelling of the
// same place (no scheme is http, a default port, case) does not.
func TestLocationChangesStrand(t *testing.T) {
	at := func(host, bucket string) *Glance {
		return glance(map[string]map[string]string{"x": {"s3_store_host": host, "s3_store_bucket": bucket}}, "x")
	}
	for name, c := range map[string]struct {
		before, after *Glance
		strands       bool
	}{
		"another host":                 {at("http://s3:9000", "a"), at("http://s4:9000", "a"), true},
		"another port":                 {at("http://s3:9000", "a"), at("http://s3:9001", "a"), true},
		"http to https":                {at("http://s3", "a"), at("https://s3", "a"), true},
		"another bucket":               {at("http://s3", "a"), at("http://s3", "b"), true},
		"no scheme is http":            {at("s3:9000", "a"), at("http://s3:9000", "a"), false},
		"the default port":             {at("https://s3", "a"), at("https://s3:443", "a"), false},
		"case":                         {at("http://S3.example", "a"), at("http://s3.example/", "a"), false},
		"nothing":                      {at("http://s3", "a"), at("http://s3", "a"), false},
		"no scheme to https is a move": {at("s3", "a"), at("https://s3", "a"), true},
	} {
		t.Run(name, func(t *testing.T) {
			r := Compare(&Render{Glances: map[string]*Glance{"ns/g": c.before}}, &Render{Glances: map[string]*Glance{"ns/g": c.after}}, Options{})
			i := slices.IndexFunc(r.Warnings, func(w Warning) bool { return w.Kind == StoreLocationChanged })
			if (i >= 0) != c.strands || r.Blocked() != c.strands {
				t.Fatalf("warned %v, blocked %v; want %v: %+v", i >= 0, r.Blocked(), c.strands, r.Warnings)
			}
			if c.strands && !strings.Contains(r.Warnings[i].Message, "drain-to") {
				t.Errorf("the warning does not say the way through (a drain): %s", r.Warnings[i].Message)
			}
		})
	}
}

// TestStrandingNeedsItsOwnDrain: a removal (or a move) passes only with
// the record of the drain the before render holds — its Job, its record
// name, its Glance and namespace, Complete with nothing left — into a
// target that stays where it is in the same commit.
func TestStrandingNeedsItsOwnDrain(t *testing.T) {
	primary := map[string]string{"s3_store_host": "http://s3", "s3_store_bucket": "p"}
	secondary := map[string]string{"s3_store_host": "http://s3", "s3_store_bucket": "s"}
	draining := func() *Glance {
		g := glance(map[string]map[string]string{"primary": primary, "secondary": secondary}, "primary")
		g.DrainsTo["secondary"], g.DrainJobs["secondary"] = "primary", "g-store-drain-secondary-0123abcd"
		return g
	}
	removed := func(target map[string]string) *Glance {
		return glance(map[string]map[string]string{"primary": target}, "primary")
	}
	good := DrainRecord{Name: "g-store-drain-secondary", Namespace: "ns", Glance: "ns/g", From: "secondary", To: "primary",
		State: "Complete", Remaining: "0", Job: "g-store-drain-secondary-0123abcd"}
	with := func(f func(*DrainRecord)) []DrainRecord { r := good; f(&r); return []DrainRecord{r} }
	for name, c := range map[string]struct {
		before, after *Glance
		records       []DrainRecord
		passes        bool
		says          string
	}{
		"its own record, complete":    {draining(), removed(primary), []DrainRecord{good}, true, "says is complete"},
		"no record":                   {draining(), removed(primary), nil, false, "its record was not given"},
		"an older drain's record":     {draining(), removed(primary), with(func(r *DrainRecord) { r.Job = "g-store-drain-secondary-ffff0000" }), false, "an older drain of a store of the same name"},
		"a record without its Job":    {draining(), removed(primary), with(func(r *DrainRecord) { r.Job = "" }), false, "is not the record of the drain"},
		"a record under another name": {draining(), removed(primary), with(func(r *DrainRecord) { r.Name = "forged" }), false, "is not the record of the drain"},
		"another namespace's record":  {draining(), removed(primary), with(func(r *DrainRecord) { r.Namespace, r.Glance = "other", "other/g" }), false, "its record was not given"},
		"another Glance's record":     {draining(), removed(primary), with(func(r *DrainRecord) { r.Glance = "ns/h" }), false, "its record was not given"},
		"still running":               {draining(), removed(primary), with(func(r *DrainRecord) { r.State, r.Remaining = "Running", "3" }), false, "3 images left"},
		"not started":                 {draining(), removed(primary), with(func(r *DrainRecord) { r.State, r.Remaining = "", "" }), false, "the Job has not started"},
		"failed":                      {draining(), removed(primary), with(func(r *DrainRecord) { r.State, r.Remaining = "Failed", "1" }), false, "says Failed"},
		"into another store":          {draining(), removed(primary), with(func(r *DrainRecord) { r.To = "tertiary" }), false, "is not complete"},
		"the target's bucket moves":   {draining(), removed(map[string]string{"s3_store_host": "http://s3", "s3_store_bucket": "p2"}), []DrainRecord{good}, false, "moves from bucket p to p2"},
		"the target's host moves":     {draining(), removed(map[string]string{"s3_store_host": "https://s3", "s3_store_bucket": "p"}), []DrainRecord{good}, false, "moves from host"},
		"the target leaves":           {draining(), glance(map[string]map[string]string{"tertiary": primary}, "tertiary"), []DrainRecord{good}, false, ""},
		"the drained store moves":     {draining(), glance(map[string]map[string]string{"primary": primary, "secondary": {"s3_store_host": "http://s3", "s3_store_bucket": "s2"}}, "primary"), []DrainRecord{good}, true, "moves from bucket s to s2 after its drain"},
		"a move without a drain":      {glance(map[string]map[string]string{"primary": primary, "secondary": secondary}, "primary"), glance(map[string]map[string]string{"primary": primary, "secondary": {"s3_store_host": "http://s3", "s3_store_bucket": "s2"}}, "primary"), []DrainRecord{good}, false, "annotate its GlanceBackend"},
	} {
		t.Run(name, func(t *testing.T) {
			r := Compare(&Render{Glances: map[string]*Glance{"ns/g": c.before}}, &Render{Glances: map[string]*Glance{"ns/g": c.after}}, Options{DrainRecords: c.records})
			if r.Blocked() == c.passes {
				t.Errorf("blocked %v, want %v: %+v", r.Blocked(), !c.passes, r.Warnings)
			}
			if c.says != "" && !slices.ContainsFunc(r.Warnings, func(w Warning) bool { return strings.Contains(w.Message, c.says) }) {
				t.Errorf("no warning says %q: %+v", c.says, r.Warnings)
			}
		})
	}
}
