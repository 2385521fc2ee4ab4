package explain

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func glance(stores map[string]map[string]string, def string) *Glance {
	return &Glance{Release: "2025.2", Stores: stores, Defaults: map[string]string{"default": def},
		Credentials: map[string]string{}, Config: map[string]map[string]string{}, Workloads: map[string]string{}}
}

func TestCompareWarnings(t *testing.T) {
	a := map[string]string{"s3_store_host": "https://s3", "s3_store_bucket": "a"}
	cases := map[string]struct {
		before, after *Glance
		opts          Options
		want          []Warning
	}{
		"no change": {glance(map[string]map[string]string{"x": a}, "x"), glance(map[string]map[string]string{"x": a}, "x"), Options{}, []Warning{}},
		"store removed blocks": {
			glance(map[string]map[string]string{"x": a, "y": a}, "x"), glance(map[string]map[string]string{"x": a}, "x"), Options{},
			[]Warning{{ID: "store-removed/ns/g/y", Kind: StoreRemoved, Glance: "ns/g", Blocking: true}},
		},
		"store removed, acknowledged": {
			glance(map[string]map[string]string{"x": a, "y": a}, "x"), glance(map[string]map[string]string{"x": a}, "x"), Options{Acknowledged: []string{"store-removed/ns/g/y"}},
			[]Warning{{ID: "store-removed/ns/g/y", Kind: StoreRemoved, Glance: "ns/g", Blocking: true, Acknowledged: true}},
		},
		"host moves": {
			glance(map[string]map[string]string{"x": a}, "x"), glance(map[string]map[string]string{"x": {"s3_store_host": "https://s4", "s3_store_bucket": "a"}}, "x"), Options{},
			[]Warning{{ID: "store-location-changed/ns/g/x/s3_store_host", Kind: StoreLocationChanged, Glance: "ns/g"}},
		},
		"default moves": {
			glance(map[string]map[string]string{"x": a, "y": a}, "x"), glance(map[string]map[string]string{"x": a, "y": a}, "y"), Options{FailOn: []string{DefaultStoreChanged}},
			[]Warning{{ID: "default-store-changed/ns/g/default", Kind: DefaultStoreChanged, Glance: "ns/g", Blocking: true}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := Compare(&Render{Glances: map[string]*Glance{"ns/g": tc.before}}, &Render{Glances: map[string]*Glance{"ns/g": tc.after}}, tc.opts)
			got := []Warning{}
			for _, w := range r.Warnings {
				w.Message = ""
				got = append(got, w)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

// TestCredentialOptionsAreHidden: should a credential ever sit in a
// rendered store section, its value is not shown.
func TestCredentialOptionsAreHidden(t *testing.T) {
	b := glance(map[string]map[string]string{"x": {"s3_store_secret_key": "old-secret", "s3_store_access_key": "old-access"}}, "x")
	a := glance(map[string]map[string]string{"x": {"s3_store_secret_key": "new-secret", "s3_store_access_key": "new-access"}}, "x")
	r := Compare(&Render{Glances: map[string]*Glance{"ns/g": b}}, &Render{Glances: map[string]*Glance{"ns/g": a}}, Options{})
	want := []OptionChange{{Option: "s3_store_access_key", Before: "(hidden)", After: "(hidden)"}, {Option: "s3_store_secret_key", Before: "(hidden)", After: "(hidden)"}}
	if d := cmp.Diff(want, r.Glances[0].Stores[0].Options); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}
