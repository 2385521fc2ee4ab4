package v1alpha1

import "testing"

func TestServedAPI(t *testing.T) {
	one := &Glance{}
	one.Name = "glance"
	several := &Glance{}
	several.Name = "glance"
	several.Spec.APIs = []GlanceAPISpec{{Name: DefaultAPIName}, {Name: "internal"}}
	cases := map[string]struct {
		g               *Glance
		workload, label string
		want            string
	}{
		"one API: any unlabelled workload serves it": {one, "anything", "", DefaultAPIName},
		"one API: a label names the API":             {one, "glance", "internal", "internal"},
		"several: the label wins over the name":      {several, "glance", "internal", "internal"},
		"several: named for the default API":         {several, "glance", "", DefaultAPIName},
		"several: named <glance>-<api>":              {several, "glance-internal", "", "internal"},
		"several: named for none":                    {several, "glance-public", "", ""},
	}
	for name, tc := range cases {
		if got := tc.g.ServedAPI(tc.workload, tc.label); got != tc.want {
			t.Errorf("%s: %q, want %q", name, got, tc.want)
		}
	}
}
