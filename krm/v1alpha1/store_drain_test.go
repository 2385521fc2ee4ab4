package v1alpha1

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/validation"
)

// TestStoreDrains: a drain names another attached store that stays, and
// an API serving both; the first such API (in spec order) runs it.
func TestStoreDrains(t *testing.T) {
	one := []ResolvedAPI{{GlanceAPISpec: GlanceAPISpec{Name: "default"}, Stores: []string{"a", "b", "c"}}}
	split := []ResolvedAPI{
		{GlanceAPISpec: GlanceAPISpec{Name: "old"}, Stores: []string{"a"}},
		{GlanceAPISpec: GlanceAPISpec{Name: "next"}, Stores: []string{"b", "c"}},
		{GlanceAPISpec: GlanceAPISpec{Name: "both"}, Stores: []string{"a", "b"}},
		{GlanceAPISpec: GlanceAPISpec{Name: "also"}, Stores: []string{"a", "b"}},
	}
	for name, tc := range map[string]struct {
		annotations map[string]string
		apis        []ResolvedAPI
		want        []StoreDrain
		refused     map[string]string // store -> words of its error
	}{
		"no annotation":   {annotations: map[string]string{"a": "", "b": ""}, apis: one},
		"a into b":        {annotations: map[string]string{"a": "b", "b": "", "c": ""}, apis: one, want: []StoreDrain{{From: "a", To: "b", API: "default"}}},
		"two drains":      {annotations: map[string]string{"a": "c", "b": "c", "c": ""}, apis: one, want: []StoreDrain{{From: "a", To: "c", API: "default"}, {From: "b", To: "c", API: "default"}}},
		"the API of both": {annotations: map[string]string{"a": "b", "b": "", "c": ""}, apis: split, want: []StoreDrain{{From: "a", To: "b", API: "both"}}},
		"itself":          {annotations: map[string]string{"a": "a"}, apis: one, refused: map[string]string{"a": "cannot drain into itself"}},
		"not attached":    {annotations: map[string]string{"a": "elsewhere", "b": ""}, apis: one, refused: map[string]string{"a": `"elsewhere"`}},
		"into a leaver":   {annotations: map[string]string{"a": "b", "b": "c", "c": ""}, apis: one, want: []StoreDrain{{From: "b", To: "c", API: "default"}}, refused: map[string]string{"a": `store "b" is itself draining into "c"`}},
		"a long name": {annotations: map[string]string{strings.Repeat("s", 253): "b", "b": ""}, apis: []ResolvedAPI{{GlanceAPISpec: GlanceAPISpec{Name: "default"}, Stores: []string{strings.Repeat("s", 253), "b"}}},
			want: []StoreDrain{{From: strings.Repeat("s", 253), To: "b", API: "default"}}},
		"the default store": {annotations: map[string]string{"a": "b", "b": ""}, apis: []ResolvedAPI{{GlanceAPISpec: GlanceAPISpec{Name: "default"}, Stores: []string{"a", "b"}, Default: "a"}},
			refused: map[string]string{"a": `store "a" is the default store of Image API "default": new uploads land in the default store and would be orphaned`}},
		"the default of one API": {annotations: map[string]string{"a": "b", "b": ""}, apis: []ResolvedAPI{
			{GlanceAPISpec: GlanceAPISpec{Name: "default"}, Stores: []string{"a", "b"}, Default: "b"},
			{GlanceAPISpec: GlanceAPISpec{Name: "old"}, Stores: []string{"a"}, Default: "a"}},
			refused: map[string]string{"a": `the default store of Image API "old"`}},
		"the default moved": {annotations: map[string]string{"a": "b", "b": ""}, apis: []ResolvedAPI{{GlanceAPISpec: GlanceAPISpec{Name: "default"}, Stores: []string{"a", "b"}, Default: "b"}},
			want: []StoreDrain{{From: "a", To: "b", API: "default"}}},
		"no API of both": {annotations: map[string]string{"a": "c", "b": "", "c": ""}, apis: split, refused: map[string]string{"a": `no Image API of the Glance serves both "a" and "c"`}},
	} {
		t.Run(name, func(t *testing.T) {
			got, errs := StoreDrains("glance", tc.annotations, tc.apis)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("drains (-want +got):\n%s", diff)
			}
			if len(errs) != len(tc.refused) {
				t.Errorf("errors %v, want %d", errs, len(tc.refused))
			}
			for store, words := range tc.refused {
				e := errs[store]
				if e == nil || !strings.Contains(e.Error(), words) || e.Field != "metadata.annotations[glance.openstack.c5c3.io/drain-to]" {
					t.Errorf("store %s: error %v, want one at the annotation saying %q", store, e, words)
				}
			}
		})
	}
}

// TestDrainNames: every valid Glance (up to MaxGlanceNameLength) and
// store (a DNS subdomain, up to 253 characters) names a record that is a
// ConfigMap name and a Job whose name is a DNS label of at most 63
// characters (its pods' job-name label); short names read as before, and
// distinct stores never share a name.
func TestDrainNames(t *testing.T) {
	glance43 := "g" + strings.Repeat("l", MaxGlanceNameLength-2) + "x"
	store253 := strings.Repeat(strings.Repeat("s", 62)+".", 4) + "s"
	if len(glance43) != MaxGlanceNameLength || len(store253) != 253 {
		t.Fatal("the test's longest names are not the longest")
	}
	stores := []string{"a", "s.a", "s-a", strings.Repeat("s", 25), strings.Repeat("s", 252) + "a", strings.Repeat("s", 252) + "b", store253,
		strings.Repeat("s", 200) + "-" + strings.Repeat("t", 52), strings.Repeat("s", 200) + "." + strings.Repeat("t", 52)}
	hash := "0123abcd"
	records, jobs := map[string]string{}, map[string]string{}
	for _, glance := range []string{"g", strings.Repeat("g", 30), glance43} {
		for _, store := range stores {
			if errs := validation.IsDNS1123Subdomain(store); len(errs) > 0 {
				t.Fatalf("test store %q: %v", store, errs)
			}
			rec, job := DrainRecordName(glance, store), DrainJobName(glance, store, hash)
			if errs := validation.IsDNS1123Subdomain(rec); len(errs) > 0 {
				t.Errorf("record of %s/%s: %q: %v", glance, store, rec, errs)
			}
			if errs := append(validation.IsDNS1123Label(job), validation.IsValidLabelValue(job)...); len(errs) > 0 {
				t.Errorf("Job of %s/%s: %q: %v", glance, store, job, errs)
			}
			if !strings.HasSuffix(job, "-"+hash) {
				t.Errorf("Job %q does not end in its spec's hash", job)
			}
			key := glance + "/" + store
			if other, dup := records[rec]; dup {
				t.Errorf("%s and %s share the record %s", key, other, rec)
			}
			if other, dup := jobs[job]; dup {
				t.Errorf("%s and %s share the Job %s", key, other, job)
			}
			records[rec], jobs[job] = key, key
			again := DrainRecordName(glance, store) + DrainJobName(glance, store, hash)
			if again != rec+job {
				t.Errorf("%s: names differ between two calls", key)
			}
		}
	}
	if got := DrainRecordName("glance", "ceph-rgw"); got != "glance-store-drain-ceph-rgw" {
		t.Errorf("a short record name is %q", got)
	}
	if got := DrainJobName("glance", "ceph-rgw", hash); got != "glance-store-drain-ceph-rgw-"+hash {
		t.Errorf("a short Job name is %q", got)
	}
}
