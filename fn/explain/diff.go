package explain

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/c5c3/glance-krm/krm/catalogs"
	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

// Warning kinds, stable for tools and for --fail-on.
const (
	DefaultStoreChanged      = "default-store-changed"
	StoreRemoved             = "store-removed"
	StoreLocationChanged     = "store-location-changed"
	CredentialsSecretRenamed = "credentials-secret-renamed"
	UnknownOption            = "unknown-option"
	// GlanceRemoved: a Glance leaves the render (deleted, renamed, moved
	// to another namespace) and takes every store, its Service and its
	// workload with it. It blocks whenever store-removed does.
	GlanceRemoved = "glance-removed"
	// StoreRenamed: a store keeps its bucket under a new name, a new
	// store id for Glance. It blocks whenever store-removed does.
	StoreRenamed = "store-renamed"
	// ReleaseDowngrade: Glance's schema migrations only go forward; it
	// always blocks (a reviewer may acknowledge it).
	ReleaseDowngrade = "release-downgrade"
	// ReleaseSkipped: a jump over a release, other than between two SLURP
	// releases.
	ReleaseSkipped = "release-skipped"
	// LocationsLeakKeys: the change turns on an option that shows image
	// location URLs to API users while they hold the S3 keys (before
	// 2026.2). It blocks whenever store-removed does.
	LocationsLeakKeys = "locations-leak-keys"
)

// Kinds are every warning kind, for --fail-on.
var Kinds = []string{StoreRemoved, GlanceRemoved, StoreRenamed, StoreLocationChanged, DefaultStoreChanged, CredentialsSecretRenamed, UnknownOption, ReleaseDowngrade, ReleaseSkipped, LocationsLeakKeys}

// blocks tells whether a warning of this kind blocks under fail-on.
func blocks(kind string, failOn []string) bool {
	switch kind {
	case ReleaseDowngrade:
		return true
	case ReleaseSkipped:
		// The function under kpt and the controller refuse it: one verdict.
		return true
	case GlanceRemoved, StoreRenamed, StoreLocationChanged, LocationsLeakKeys:
		// As hard as removing one store: each strands its images.
		return slices.Contains(failOn, kind) || slices.Contains(failOn, StoreRemoved)
	}
	return slices.Contains(failOn, kind)
}

// hidden are options whose values a report never shows: credentials do
// not travel through the rendered files, but a value is not printed even
// if one did.
func hidden(option string) bool {
	return option == v1alpha1.OptionS3SecretKey || option == v1alpha1.OptionS3AccessKey || strings.Contains(option, "password")
}

// Compare explains the change from before to after.
func Compare(before, after *Render, o Options) *Report {
	if o.FailOn == nil {
		o.FailOn = []string{StoreRemoved}
	}
	r := &Report{Glances: []GlanceChange{}, Warnings: []Warning{}, records: o.DrainRecords}
	names := slices.Sorted(maps.Keys(before.Glances))
	for n := range after.Glances {
		if _, ok := before.Glances[n]; !ok {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	for _, n := range names {
		b, a := before.Glances[n], after.Glances[n]
		c := GlanceChange{Glance: n}
		switch {
		case b == nil:
			c.Status, c.Release = "added", a.Release
			b = &Glance{}
		case a == nil:
			c.Status, c.Release = "removed", b.Release
			r.warn(GlanceRemoved, n, "", "Glance %s leaves the render (deleted, renamed or moved to another namespace): it takes its stores (%s), its Service and its workload with it, and the images in those stores become unreachable; if it moves, its database and buckets go with it only by hand", n, strings.Join(slices.Sorted(maps.Keys(b.Stores)), ", "))
			a = &Glance{}
		default:
			c.Release = a.Release
			if b.Release != a.Release {
				c.ReleaseBefore = b.Release
			}
			r.releaseChange(&c, b, a)
		}
		r.compareGlance(&c, b, a)
		if c.Status == "" {
			c.Status = "unchanged"
			if len(c.Stores)+len(c.Defaults)+len(c.Options)+len(c.Renamed)+len(c.Rolls)+len(c.APIStores)+len(c.Added)+len(c.Removed)+len(c.Changed) > 0 || c.ReleaseBefore != "" {
				c.Status = "changed"
			}
		}
		r.Glances = append(r.Glances, c)
	}
	for i := range r.Warnings {
		w := &r.Warnings[i]
		w.Blocking = blocks(w.Kind, o.FailOn) && !w.Cleared
		w.Acknowledged = slices.Contains(o.Acknowledged, w.ID)
	}
	return r
}

func (r *Report) warn(kind, glance, subject, format string, args ...any) {
	id := kind + "/" + glance
	if subject != "" {
		id += "/" + subject
	}
	r.Warnings = append(r.Warnings, Warning{ID: id, Kind: kind, Glance: glance, Message: redact(fmt.Sprintf(format, args...))})
}

// userinfo is a URL's user[:password]@.
var userinfo = regexp.MustCompile(`://[^/@\s]*@`)

// redact takes the userinfo out of every URL in a text: no explain
// format ever shows one (a host the build refuses, a connection string).
func redact(s string) string { return userinfo.ReplaceAllString(s, "://(hidden)@") }

// releaseChange judges a change of openStackRelease: a downgrade, a
// skipped release, and the options the new release no longer reads.
func (r *Report) releaseChange(c *GlanceChange, b, a *Glance) {
	g := c.Glance
	// The path of spec.openStackRelease, and the path of what the pods
	// run when an image names another release: from the newest release
	// anything ran before (what the schema may be at) to each release a
	// workload runs after; the first problem of each kind is told.
	type path struct{ from, to, why string }
	paths := []path{{b.Release, a.Release, ""}}
	from, fromImage := newestRunning(b)
	for _, w := range slices.Sorted(maps.Keys(a.Images)) {
		to, ok := v1alpha1.ImageRelease(a.Images[w])
		if !ok || (to == a.Release && from == b.Release) || (a.Images[w] == b.Images[w] && a.Release == b.Release) {
			continue // told by the spec's path, or nothing changes
		}
		why := fmt.Sprintf("the glance-api image of %s, %s, is of release %s", w, a.Images[w], to)
		if fromImage != "" {
			why = fromImage + "; " + why
		}
		paths = append(paths, path{from, to, why})
	}
	told := map[string]bool{}
	for _, p := range paths {
		reason, problem := v1alpha1.Problem(p.from, p.to)
		kind := map[string]string{v1alpha1.ReasonDowngradeNotSupported: ReleaseDowngrade, v1alpha1.ReasonUpgradePathInvalid: ReleaseSkipped}[reason]
		if kind == "" || told[kind] {
			continue
		}
		told[kind] = true
		if p.why != "" {
			problem = strings.Replace(problem, "openStackRelease", "the release the pods run", 1) + " (" + p.why + ")"
		}
		r.warn(kind, g, "", "%s", problem)
	}
	if b.Release == a.Release {
		return
	}
	old, cat := catalogs.For(b.Release), catalogs.For(a.Release)
	if old == nil || cat == nil {
		return
	}
	for _, store := range slices.Sorted(maps.Keys(a.Stores)) {
		for _, opt := range slices.Sorted(maps.Keys(a.Stores[store])) {
			_, was := old.StoreOptions[opt]
			if _, is := cat.StoreOptions[opt]; was && !is {
				c.NoLongerRead = append(c.NoLongerRead, fmt.Sprintf("[%s] %s", store, opt))
			}
		}
	}
	conf := a.config()
	for _, section := range slices.Sorted(maps.Keys(conf)) {
		was, okOld := old.Section(section)
		is, okNew := cat.Section(section)
		for _, opt := range slices.Sorted(maps.Keys(conf[section])) {
			_, inOld := was[opt]
			_, inNew := is[opt]
			if okOld && inOld && (!okNew || !inNew) {
				c.NoLongerRead = append(c.NoLongerRead, fmt.Sprintf("[%s] %s", section, opt))
			}
		}
	}
}

// newestRunning is the newest release a render's pods run: its
// spec.openStackRelease, or a workload's glance-api image naming a newer
// one (an overlay's images:, a kpt setter, both of which the function
// keeps). why names the image when it decides.
func newestRunning(g *Glance) (release, why string) {
	release = g.Release
	for _, w := range slices.Sorted(maps.Keys(g.Images)) {
		rel, ok := v1alpha1.ImageRelease(g.Images[w])
		if !ok || rel == release {
			continue
		}
		if p, known := v1alpha1.PathBetween(release, rel); known && !p.Downgrade {
			release, why = rel, fmt.Sprintf("before, the glance-api image of %s, %s, was of release %s", w, g.Images[w], rel)
		}
	}
	return release, why
}

func (r *Report) compareGlance(c *GlanceChange, b, a *Glance) {
	g := c.Glance
	renamedTo := renamedStores(b.Stores, a.Stores)
	renamedFrom := map[string]string{}
	for old, store := range renamedTo {
		renamedFrom[store] = old
	}
	for _, store := range union(b.Stores, a.Stores) {
		bo, inB := b.Stores[store]
		ao, inA := a.Stores[store]
		switch {
		case !inB && renamedFrom[store] != "":
			old := renamedFrom[store]
			c.Stores = append(c.Stores, StoreChange{Store: store, Change: "renamed", From: old, Options: options(b.Stores[old], ao)})
			r.warn(StoreRenamed, g, old, "store %q is renamed to %q (the same bucket %s on %s): that is a new store id for Glance, and every image recorded under %q keeps that id in its locations, which no store serves after the change; move the images (or keep the name)%s", old, store, ao["s3_store_bucket"], ao["s3_store_host"], old, leakOnRead(a.Release))
		case !inA && renamedTo[store] != "":
			// shown as the rename above
		case !inB:
			c.Stores = append(c.Stores, StoreChange{Store: store, Change: "added", Options: options(nil, ao)})
		case !inA:
			c.Stores = append(c.Stores, StoreChange{Store: store, Change: "removed"})
			if c.Status != "removed" {
				msg, cleared := stranding(g, store, "is removed", b, a, r.records)
				r.warn(StoreRemoved, g, store, "%s", msg)
				r.Warnings[len(r.Warnings)-1].Cleared = cleared
			}
		default:
			if to := a.DrainsTo[store]; to != "" && to != b.DrainsTo[store] {
				c.Stores = append(c.Stores, StoreChange{Store: store, Change: "drains", To: to})
			}
			if opts := options(bo, ao); len(opts) > 0 {
				c.Stores = append(c.Stores, StoreChange{Store: store, Change: "changed", Options: opts})
			}
			if moved := relocated(bo, ao); moved != "" {
				msg, cleared := stranding(g, store, moved, b, a, r.records)
				r.warn(StoreLocationChanged, g, store, "%s", msg)
				r.Warnings[len(r.Warnings)-1].Cleared = cleared
			}
		}
		if bs, as := b.Credentials[store], a.Credentials[store]; inB && inA && bs != "" && as != "" && bs != as {
			r.warn(CredentialsSecretRenamed, g, store, "the credentials Secret of store %q changes from %q to %q: it must exist with both keys before the pods roll; %s (docs/day2.md)", store, bs, as, v1alpha1.RotationAdvice(a.Release))
		}
	}
	for _, api := range union(b.Defaults, a.Defaults) {
		bd, ad := b.Defaults[api], a.Defaults[api]
		if bd != ad {
			c.Defaults = append(c.Defaults, DefaultChange{API: api, Before: bd, After: ad})
			if bd != "" && ad != "" {
				r.warn(DefaultStoreChanged, g, api, "the default store of API %q changes from %q to %q: new images go to %q", api, bd, ad, ad)
			}
		}
	}
	c.Options = configChanges(b, a)
	r.renames(c, b, a)
	// Which API serves which store matters with several APIs; with one,
	// the store lines above say it all.
	apis := union(b.APIStores, a.APIStores)
	if len(apis) < 2 {
		apis = nil
	}
	for _, api := range apis {
		bs, as := b.APIStores[api], a.APIStores[api]
		if len(bs) > 0 && len(as) > 0 && !slices.Equal(bs, as) {
			c.APIStores = append(c.APIStores, APIStoresChange{API: api, Before: bs, After: as})
		}
	}
	c.Added, c.Removed, c.Rolls, c.Stays = compareObjects(b.Workloads, a.Workloads)
	added, removed, changed, _ := compareObjects(b.Objects, a.Objects)
	c.Added, c.Removed, c.Changed = append(c.Added, added...), append(c.Removed, removed...), changed
	r.unknownOptions(g, a)
	r.locationsLeak(g, b, a)
}

// compareObjects sorts objects (kind/name -> serialized) into added,
// removed, changed and unchanged.
func compareObjects(before, after map[string]string) (added, removed, changed, same []string) {
	for _, o := range union(before, after) {
		bt, inB := before[o]
		at, inA := after[o]
		switch {
		case !inB:
			added = append(added, o)
		case !inA:
			removed = append(removed, o)
		case bt != at:
			changed = append(changed, o)
		default:
			same = append(same, o)
		}
	}
	return added, removed, changed, same
}

func options(before, after map[string]string) []OptionChange {
	var out []OptionChange
	for _, o := range union(before, after) {
		b, a := before[o], after[o]
		if b == a {
			continue
		}
		if hidden(o) {
			b, a = mask(b), mask(a)
		}
		b, a = redact(b), redact(a)
		out = append(out, OptionChange{Option: o, Before: b, After: a})
	}
	return out
}

func mask(v string) string {
	if v == "" {
		return ""
	}
	return "(hidden)"
}

func union[V any](a, b map[string]V) []string {
	keys := slices.Collect(maps.Keys(a))
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}
