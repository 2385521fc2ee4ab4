package explain

import (
	"slices"
	"strings"
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

func TestGateKinds(t *testing.T) {
	a := map[string]string{"s3_store_host": "https://s3", "s3_store_bucket": "a"}
	one := func(release string) *Glance {
		g := glance(map[string]map[string]string{"x": a}, "x")
		g.Release = release
		return g
	}
	for name, c := range map[string]struct {
		before, after *Glance
		failOn        []string
		kind          string
		blocking      bool
	}{
		"a Glance that leaves blocks by default": {one("2025.2"), nil, nil, GlanceRemoved, true},
		"as hard as a store removal":             {one("2025.2"), nil, []string{StoreRemoved}, GlanceRemoved, true},
		"not when no store removal blocks":       {one("2025.2"), nil, []string{}, GlanceRemoved, false},
		"a downgrade always blocks":              {one("2026.1"), one("2025.2"), []string{}, ReleaseDowngrade, true},
		"a skip is flagged":                      {one("2024.2"), one("2025.2"), nil, ReleaseSkipped, false},
		"a skip blocks when asked":               {one("2024.2"), one("2025.2"), []string{ReleaseSkipped}, ReleaseSkipped, true},
		"a store renamed on its bucket blocks":   {one("2025.2"), glance(map[string]map[string]string{"y": a}, "y"), nil, StoreRenamed, true},
	} {
		t.Run(name, func(t *testing.T) {
			before := &Render{Glances: map[string]*Glance{"ns/g": c.before}}
			after := &Render{Glances: map[string]*Glance{}}
			if c.after != nil {
				after.Glances["ns/g"] = c.after
			}
			r := Compare(before, after, Options{FailOn: c.failOn})
			found := false
			for _, w := range r.Warnings {
				if w.Kind == c.kind {
					found = true
					if w.Blocking != c.blocking {
						t.Errorf("%s blocking = %v, want %v", w.Kind, w.Blocking, c.blocking)
					}
				}
			}
			if !found {
				t.Errorf("no %s warning: %+v", c.kind, r.Warnings)
			}
			if c.kind == StoreRenamed && slices.ContainsFunc(r.Warnings, func(w Warning) bool { return w.Kind == StoreRemoved }) {
				t.Errorf("a rename is also reported as a removal: %+v", r.Warnings)
			}
		})
	}
}

func TestRedact(t *testing.T) {
	for in, want := range map[string]string{
		"http://user:pa55@s3.example":        "http://(hidden)@s3.example",
		"mysql+pymysql://glance:x@db/glance": "mysql+pymysql://(hidden)@db/glance",
		"https://s3.example/@path":           "https://s3.example/@path",
		"no url":                             "no url",
	} {
		if got := redact(in); got != want {
			t.Errorf("redact(%q) = %q, want %q", in, got, want)
		}
	}
}

// A store leaving, on a release that logs every read of its images with
// the keys in the location URL, says so; on 2026.2 it does not.
func TestStoreLeavingLogsKeys(t *testing.T) {
	a := map[string]string{"s3_store_host": "https://s3", "s3_store_bucket": "a"}
	b := map[string]string{"s3_store_host": "https://s3", "s3_store_bucket": "b"}
	for name, c := range map[string]struct {
		release string
		after   map[string]map[string]string
		kind    string
		says    bool
	}{
		"removed on 2025.2": {"2025.2", map[string]map[string]string{"x": a}, StoreRemoved, true},
		"removed on 2022.2": {"2022.2", map[string]map[string]string{"x": a}, StoreRemoved, true},
		"renamed on 2026.1": {"2026.1", map[string]map[string]string{"x": a, "z": b}, StoreRenamed, true},
		"removed on 2026.2": {"2026.2", map[string]map[string]string{"x": a}, StoreRemoved, false},
	} {
		t.Run(name, func(t *testing.T) {
			before, after := glance(map[string]map[string]string{"x": a, "y": b}, "x"), glance(c.after, "x")
			before.Release, after.Release = c.release, c.release
			r := Compare(&Render{Glances: map[string]*Glance{"ns/g": before}}, &Render{Glances: map[string]*Glance{"ns/g": after}}, Options{})
			i := slices.IndexFunc(r.Warnings, func(w Warning) bool { return w.Kind == c.kind })
			if i < 0 {
				t.Fatalf("no %s warning: %+v", c.kind, r.Warnings)
			}
			if got := strings.Contains(r.Warnings[i].Message, "both S3 keys included, at WARNING"); got != c.says {
				t.Errorf("the warning names the key leak: %v, want %v: %s", got, c.says, r.Warnings[i].Message)
			}
		})
	}
}

// A store's credentialsSecretRef changing prints the rotation procedure of
// the release the change runs.
func TestCredentialsRenamedSaysHowToRotate(t *testing.T) {
	a := map[string]string{"s3_store_host": "https://s3", "s3_store_bucket": "a"}
	for release, want := range map[string]string{
		"2025.1": "keep the old pair valid on the S3 server for as long as an image written with it exists",
		"2022.2": "keep the old pair valid on the S3 server for as long as an image written with it exists",
		"2025.2": "the old pair may be revoked once every pod runs with the new Secret; an image's location keeps the old pair until",
		"2026.1": "the old pair may be revoked once every pod runs with the new Secret; an image's location keeps the old pair until",
		"2026.2": "writes locations without keys",
	} {
		t.Run(release, func(t *testing.T) {
			before, after := glance(map[string]map[string]string{"x": a}, "x"), glance(map[string]map[string]string{"x": a}, "x")
			before.Release, after.Release = release, release
			before.Credentials["x"], after.Credentials["x"] = "s3-old", "s3-new"
			r := Compare(&Render{Glances: map[string]*Glance{"ns/g": before}}, &Render{Glances: map[string]*Glance{"ns/g": after}}, Options{})
			i := slices.IndexFunc(r.Warnings, func(w Warning) bool { return w.Kind == CredentialsSecretRenamed })
			if i < 0 || !strings.Contains(r.Warnings[i].Message, want) || !strings.Contains(r.Warnings[i].Message, "Glance "+release) {
				t.Errorf("no %s warning with %q: %+v", CredentialsSecretRenamed, want, r.Warnings)
			}
		})
	}
}
