package v1alpha1

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestResolveAPIs(t *testing.T) {
	attached := []string{"s3-b", "s3-a", "s3-c"}
	cases := map[string]struct {
		apis      []GlanceAPISpec
		def       string
		want      map[string]ResolvedAPI
		wantError []string
	}{
		"no apis: one default API with every store": {
			def:  "s3-a",
			want: map[string]ResolvedAPI{"default": {Stores: []string{"s3-a", "s3-b", "s3-c"}, Default: "s3-a"}},
		},
		"subset keeps the Glance default": {
			apis: []GlanceAPISpec{{Name: "default"}, {Name: "next", Backends: []string{"s3-c", "s3-a"}}},
			def:  "s3-a",
			want: map[string]ResolvedAPI{
				"default": {Stores: []string{"s3-a", "s3-b", "s3-c"}, Default: "s3-a"},
				"next":    {Stores: []string{"s3-a", "s3-c"}, Default: "s3-a"},
			},
		},
		"subset with its own default": {
			apis: []GlanceAPISpec{{Name: "next", Backends: []string{"s3-c"}, DefaultBackend: "s3-c"}},
			def:  "s3-a",
			want: map[string]ResolvedAPI{"next": {Stores: []string{"s3-c"}, Default: "s3-c"}},
		},
		"subset without the default store has no default": {
			apis:      []GlanceAPISpec{{Name: "next", Backends: []string{"s3-c"}}},
			def:       "s3-a",
			wantError: []string{`spec.apis[0].backends: Invalid value: ["s3-c"]: API "next" has no default store: its backends do not include "s3-a", the GlanceBackend marked isDefault; set spec.apis[0].defaultBackend to one of its backends (exactly one default store is allowed)`},
		},
		"a store that is not attached": {
			apis:      []GlanceAPISpec{{Name: "next", Backends: []string{"s3-a", "gone"}}},
			def:       "s3-a",
			wantError: []string{`spec.apis[0].backends[1]: Invalid value: "gone": no GlanceBackend named "gone" is attached to this Glance (its spec.glanceRef): an API's backends must be attached to its Glance`},
		},
		"a default that is not attached": {
			apis:      []GlanceAPISpec{{Name: "next", DefaultBackend: "gone"}},
			def:       "s3-a",
			wantError: []string{`spec.apis[0].defaultBackend: Invalid value: "gone": no GlanceBackend named "gone" is attached to this Glance (its spec.glanceRef)`},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			spec := &GlanceSpec{APIs: tc.apis}
			got, errs := ResolveAPIs(spec, attached, tc.def, field.NewPath("spec", "apis"))
			var gotErrs []string
			for _, e := range errs {
				gotErrs = append(gotErrs, e.Error())
			}
			if diff := cmp.Diff(tc.wantError, gotErrs); diff != "" {
				t.Fatalf("errors (-want +got):\n%s", diff)
			}
			if tc.wantError != nil {
				return
			}
			byName := map[string]ResolvedAPI{}
			for _, r := range got {
				byName[r.Name] = ResolvedAPI{Stores: r.Stores, Default: r.Default}
			}
			if diff := cmp.Diff(tc.want, byName); diff != "" {
				t.Errorf("resolved (-want +got):\n%s", diff)
			}
		})
	}
}
