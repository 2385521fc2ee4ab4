package v1alpha1

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
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
		"a name too long": {annotations: map[string]string{strings.Repeat("s", 36): "b", "b": ""}, apis: []ResolvedAPI{{GlanceAPISpec: GlanceAPISpec{Name: "default"}, Stores: []string{strings.Repeat("s", 36), "b"}}},
			refused: map[string]string{strings.Repeat("s", 36): "longer than a Job's 63 characters"}},
		"the longest name": {annotations: map[string]string{strings.Repeat("s", 35): "b", "b": ""}, apis: []ResolvedAPI{{GlanceAPISpec: GlanceAPISpec{Name: "default"}, Stores: []string{strings.Repeat("s", 35), "b"}}},
			want: []StoreDrain{{From: strings.Repeat("s", 35), To: "b", API: "default"}}},
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
