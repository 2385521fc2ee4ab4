package explain

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/c5c3/glance-krm/krm/catalogs"
	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

// locationsLeak warns when the change makes Glance show every reader the
// S3 keys in image location URLs (v1alpha1.LocationsLeakKeys): an option
// turned on, a release or a store that makes it leak.
func (r *Report) locationsLeak(g string, b, a *Glance) {
	leaks := func(x *Glance) map[string]bool {
		out := map[string]bool{}
		def := v1alpha1.ConfigSection{}
		for k, v := range x.config()["DEFAULT"] {
			def[k] = v1alpha1.OptionValue(v)
		}
		for _, e := range v1alpha1.LocationsLeakKeys(x.Release, map[string]v1alpha1.ConfigSection{"DEFAULT": def}, len(x.Stores)) {
			out[e.Field] = true
		}
		return out
	}
	before := leaks(b)
	for _, opt := range v1alpha1.LocationOptions {
		f := "spec.extraConfig[DEFAULT][" + opt + "]"
		if leaks(a)[f] && !before[f] {
			r.warn(LocationsLeakKeys, g, opt, "[DEFAULT] %s shows every user who may read an image its location URL, and Glance %s writes the store's S3 access and secret key into every S3 location: every store's keys leak to API users; leave it off before 2026.2", opt, a.Release)
		}
	}
}

// relocated says how a kept store's location changes (what every image
// location URL it wrote holds: scheme, host, bucket), or "".
func relocated(before, after map[string]string) string {
	var what []string
	if !sameHost(before[optHost], after[optHost]) {
		what = append(what, fmt.Sprintf("moves from host %s to %s", before[optHost], after[optHost]))
	}
	if before[optBucket] != after[optBucket] {
		what = append(what, fmt.Sprintf("moves from bucket %s to %s", before[optBucket], after[optBucket]))
	}
	return strings.Join(what, " and ")
}

// renamedStores pairs a store that leaves with one that comes on the
// same host and bucket: old name -> new name.
func renamedStores(before, after map[string]map[string]string) map[string]string {
	out := map[string]string{}
	taken := map[string]bool{}
	for _, old := range slices.Sorted(maps.Keys(before)) {
		if _, stays := after[old]; stays {
			continue
		}
		for _, store := range slices.Sorted(maps.Keys(after)) {
			if _, existed := before[store]; existed || taken[store] {
				continue
			}
			bo, ao := before[old], after[store]
			if bo["s3_store_bucket"] != "" && bo["s3_store_bucket"] == ao["s3_store_bucket"] && bo["s3_store_host"] == ao["s3_store_host"] {
				out[old], taken[store] = store, true
				break
			}
		}
	}
	return out
}

// renames pairs the hashed objects by kind: a ConfigMap and a Secret per
// set of files the workloads mount.
func (r *Report) renames(c *GlanceChange, b, a *Glance) {
	for _, kind := range []string{"ConfigMap", "Secret"} {
		bn, an := ofKind(b.Files, kind), ofKind(a.Files, kind)
		var gone, fresh []string
		for _, n := range bn {
			if slices.Contains(an, n) {
				c.Kept = append(c.Kept, kind+"/"+n)
			} else {
				gone = append(gone, n)
			}
		}
		for _, n := range an {
			if !slices.Contains(bn, n) {
				fresh = append(fresh, n)
			}
		}
		for i := range max(len(gone), len(fresh)) {
			rn := Rename{Kind: kind}
			if i < len(gone) {
				rn.Before = gone[i]
			}
			if i < len(fresh) {
				rn.After = fresh[i]
			}
			c.Renamed = append(c.Renamed, rn)
		}
	}
}

func ofKind(files []string, kind string) []string {
	var out []string
	for _, f := range files {
		if k, n, _ := strings.Cut(f, "/"); k == kind {
			out = append(out, n)
		}
	}
	return out
}

// unknownOptions warns about options of the rendered files that the
// Glance's release does not read (glance_store and oslo.config ignore them
// without a word). Sections the catalog does not describe are not judged.
func (r *Report) unknownOptions(g string, a *Glance) {
	cat := catalogs.For(a.Release)
	if cat == nil {
		return
	}
	for _, store := range slices.Sorted(maps.Keys(a.Stores)) {
		for _, opt := range slices.Sorted(maps.Keys(a.Stores[store])) {
			if _, ok := cat.StoreOptions[opt]; !ok {
				r.warn(UnknownOption, g, store+"/"+opt, "option %q of store %q is not an option of an S3 store in Glance %s (%s): Glance ignores it", opt, store, a.Release, cat.Short())
			}
		}
	}
	conf := a.config()
	for _, section := range slices.Sorted(maps.Keys(conf)) {
		known, ok := cat.Section(section)
		if !ok {
			continue
		}
		for _, opt := range slices.Sorted(maps.Keys(conf[section])) {
			if _, ok := known[opt]; !ok {
				r.warn(UnknownOption, g, section+"/"+opt, "option [%s] %s of glance-api.conf is not read by Glance %s (%s)", section, opt, a.Release, cat.Short())
			}
		}
	}
}

// leakOnRead is what a store leaving costs on a release that logs, on
// every read of an image the store held, the image's full location URL
// with both S3 keys at WARNING (v1alpha1.RemovedStoreLogsKeys, measured).
func leakOnRead(release string) string {
	if !v1alpha1.RemovedStoreLogsKeys(release) {
		return ""
	}
	return fmt.Sprintf("; until then, Glance %s logs every read of such an image with its full location URL, both S3 keys included, at WARNING: rotate that store's keys once the images are moved (docs/day2.md)", release)
}
