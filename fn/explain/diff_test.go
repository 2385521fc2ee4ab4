package explain

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func glance(stores map[string]map[string]string, def string) *Glance {
	return &Glance{Release: "2025.2", Stores: stores, Defaults: map[string]string{"default": def},
		Credentials: map[string]string{}, Config: map[string]map[string]map[string]string{}, Workloads: map[string]string{},
		DrainsTo: map[string]string{}, DrainJobs: map[string]string{}, Images: map[string]string{}}
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
			[]Warning{{ID: "store-location-changed/ns/g/x", Kind: StoreLocationChanged, Glance: "ns/g", Blocking: true}},
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
		"a skip always blocks":                   {one("2024.2"), one("2025.2"), []string{}, ReleaseSkipped, true},
		"no release series blocks":               {one("2025.2"), one("2025.3"), []string{}, ReleaseSkipped, true},
		"a location change blocks by default":    {one("2025.2"), glance(map[string]map[string]string{"x": {"s3_store_host": "https://s3", "s3_store_bucket": "b"}}, "x"), nil, StoreLocationChanged, true},
		"as hard as a store removal, no harder":  {one("2025.2"), glance(map[string]map[string]string{"x": {"s3_store_host": "http://s3", "s3_store_bucket": "a"}}, "x"), []string{}, StoreLocationChanged, false},
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

// TestImageOnlyDowngrade: the release the pods run is the image's when
// its tag names one; an image that goes down while openStackRelease stays
// is a downgrade, and an image of another release is judged too.
func TestImageOnlyDowngrade(t *testing.T) {
	a := map[string]string{"s3_store_host": "https://s3", "s3_store_bucket": "a"}
	with := func(release, image string) *Glance {
		g := glance(map[string]map[string]string{"x": a}, "x")
		g.Release = release
		if image != "" {
			g.Images["Deployment/glance"] = image
		}
		return g
	}
	for name, c := range map[string]struct {
		before, after *Glance
		kind          string // "" for none
	}{
		"the image goes down alone":         {with("2026.1", "glance:2026.1"), with("2026.1", "glance:2025.2"), ReleaseDowngrade},
		"a build of the same release":       {with("2026.1", "glance:2026.1"), with("2026.1", "glance:2026.1-p1"), ""},
		"both go up together":               {with("2025.2", "glance:2025.2"), with("2026.1", "glance:2026.1"), ""},
		"the image skips a release":         {with("2025.2", "glance:2025.2"), with("2025.2", "glance:2026.2"), ReleaseSkipped},
		"the image names no release":        {with("2026.1", "glance:2026.1"), with("2026.1", "glance:latest"), ""},
		"an older image already ran before": {with("2026.1", "glance:2025.2"), with("2026.1", "glance:2026.1"), ""},
		"a newer image ran before":          {with("2025.2", "glance:2026.1"), with("2025.2", "glance:2025.2"), ReleaseDowngrade},
	} {
		t.Run(name, func(t *testing.T) {
			r := Compare(&Render{Glances: map[string]*Glance{"ns/g": c.before}}, &Render{Glances: map[string]*Glance{"ns/g": c.after}}, Options{})
			var kinds []string
			for _, w := range r.Warnings {
				kinds = append(kinds, w.Kind)
				if w.Kind == c.kind && !strings.Contains(w.Message, "the glance-api image of Deployment/glance") {
					t.Errorf("the warning does not name the image: %s", w.Message)
				}
			}
			if (c.kind == "") != (len(kinds) == 0) || (c.kind != "" && !slices.Contains(kinds, c.kind)) {
				t.Errorf("warnings %v, want %q", kinds, c.kind)
			}
			if c.kind != "" && !r.Blocked() {
				t.Errorf("%s does not block", c.kind)
			}
		})
	}
}

// TestEveryGlanceAPIConfOptionChangeIsShown: every rendered option of
// glance-api.conf that changes is listed, a secret one masked, a URL's
// userinfo hidden.
func TestEveryGlanceAPIConfOptionChangeIsShown(t *testing.T) {
	conf := func(workers, url, key string) map[string]map[string]string {
		return map[string]map[string]string{"DEFAULT": {"workers": workers, "transport_url": key}, "keystone_authtoken": {"auth_url": url}}
	}
	b, a := glance(nil, "x"), glance(nil, "x")
	b.Config["default"] = conf("2", "http://keystone:5000", "rabbit://u:old@mq")
	a.Config["default"] = conf("4", "http://user:pw@keystone2:5000", "rabbit://u:new@mq")
	a.Config["default"]["oslo_policy"] = map[string]string{"enforce_scope": "true"}
	r := Compare(&Render{Glances: map[string]*Glance{"ns/g": b}}, &Render{Glances: map[string]*Glance{"ns/g": a}}, Options{})
	want := []ConfigChange{
		{API: "default", Section: "DEFAULT", Option: "transport_url", Before: "(hidden)", After: "(hidden)"},
		{API: "default", Section: "DEFAULT", Option: "workers", Before: "2", After: "4"},
		{API: "default", Section: "keystone_authtoken", Option: "auth_url", Before: "http://keystone:5000", After: "http://(hidden)@keystone2:5000"},
		{API: "default", Section: "oslo_policy", Option: "enforce_scope", After: "true"},
	}
	if d := cmp.Diff(want, r.Glances[0].Options); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	if r.Glances[0].Status != "changed" {
		t.Errorf("status %s, want changed", r.Glances[0].Status)
	}
}

// An image that already disagreed with the release before is no change.
func TestUnchangedImageIsNoDowngrade(t *testing.T) {
	g := glance(map[string]map[string]string{"x": {"s3_store_host": "https://s3"}}, "x")
	g.Release, g.Images["Deployment/glance"] = "2026.1", "glance:2025.2"
	r := Compare(&Render{Glances: map[string]*Glance{"ns/g": g}}, &Render{Glances: map[string]*Glance{"ns/g": g}}, Options{})
	if len(r.Warnings) != 0 {
		t.Errorf("warnings on no change: %+v", r.Warnings)
	}
}

// TestLocationsLeakKeys: turning on an option that shows location URLs
// blocks while locations carry keys; on 2026.2, or already on before, not.
func TestLocationsLeakKeys(t *testing.T) {
	with := func(release, value string) *Glance {
		g := glance(map[string]map[string]string{"x": {"s3_store_host": "https://s3"}}, "x")
		g.Release = release
		g.Config["default"] = map[string]map[string]string{"DEFAULT": {"workers": "2"}}
		if value != "" {
			g.Config["default"]["DEFAULT"]["show_image_direct_url"] = value
		}
		return g
	}
	for name, c := range map[string]struct {
		before, after *Glance
		blocks        bool
	}{
		"turned on on 2025.2":  {with("2025.2", ""), with("2025.2", "True"), true},
		"turned on on 2026.2":  {with("2026.2", ""), with("2026.2", "true"), false},
		"on before, unchanged": {with("2025.2", "true"), with("2025.2", "true"), false},
		"turned off":           {with("2025.2", "true"), with("2025.2", "false"), false},
	} {
		t.Run(name, func(t *testing.T) {
			r := Compare(&Render{Glances: map[string]*Glance{"ns/g": c.before}}, &Render{Glances: map[string]*Glance{"ns/g": c.after}}, Options{})
			found := slices.ContainsFunc(r.Warnings, func(w Warning) bool { return w.Kind == LocationsLeakKeys })
			if found != c.blocks || r.Blocked() != c.blocks {
				t.Errorf("warned %v, blocked %v, want %v: %+v", found, r.Blocked(), c.blocks, r.Warnings)
			}
		})
	}
}
