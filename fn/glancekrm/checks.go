package glancekrm

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/c5c3/glance-krm/fn/findings"
	"github.com/c5c3/glance-krm/fn/glancekrm/controlplane"
	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

// The cross-object rules of one Glance, with everything attached to it:
// each check returns its findings and whether the Glance may still be
// rendered. They all run, even when an object is already invalid, so that
// one run reports every violation (docs/contract.md lists them).
type check func(ge *glanceEntry) ([]findings.Finding, bool)

var glanceChecks = []check{
	checkExtraConfigStores,
	checkControlPlaneDefault,
	checkExactlyOneDefault,
	checkRelease,
	checkReadableBackends,
	checkImageReference,
	checkImageRelease,
	checkDebugLogsStoreKeys,
	checkLocationsLeakKeys,
	checkWorkersUnderUWSGI,
}

// runChecks is the check chain; valid is false when the Glance or one of
// its backends is invalid on its own, or a check refused it.
func runChecks(ge *glanceEntry) (results []findings.Finding, valid bool) {
	valid = ge.valid
	for _, be := range ge.backends {
		valid = valid && be.valid
	}
	for _, c := range glanceChecks {
		rs, ok := c(ge)
		results = append(results, rs...)
		valid = valid && ok
	}
	return results, valid
}

func (ge *glanceEntry) storeNames() []string {
	stores := make([]string, len(ge.backends))
	for i, be := range ge.backends {
		stores[i] = be.b.Name
	}
	return stores
}

func (ge *glanceEntry) backendSpecs() []*v1alpha1.GlanceBackend {
	out := make([]*v1alpha1.GlanceBackend, len(ge.backends))
	for i, be := range ge.backends {
		out[i] = be.b
	}
	return out
}

// checkExtraConfigStores: spec.extraConfig may not write a store's
// section, which backends.conf owns.
func checkExtraConfigStores(ge *glanceEntry) ([]findings.Finding, bool) {
	errs := v1alpha1.ValidateExtraConfigStores(ge.g.Spec.ExtraConfig, ge.storeNames(), field.NewPath("spec", "extraConfig"))
	return findings.Fields(ge.obj, "extraconfig-store-section", errs), len(errs) == 0
}

// checkControlPlaneDefault: a hand-written GlanceBackend attached to a
// projected Glance may not take the default store from the ControlPlane.
func checkControlPlaneDefault(ge *glanceEntry) ([]findings.Finding, bool) {
	labels := map[string]map[string]string{}
	for _, be := range ge.backends {
		labels[be.b.Name] = be.b.Labels
	}
	msg := controlplane.HandWrittenDefault(ge.g, ge.backendSpecs(), func(n string) map[string]string { return labels[n] })
	if msg == "" {
		return nil, true
	}
	return []findings.Finding{findings.About(ge.obj, findings.Error, "controlplane-default", msg)}, false
}

// checkExactlyOneDefault: exactly one store is the default.
func checkExactlyOneDefault(ge *glanceEntry) ([]findings.Finding, bool) {
	if _, err := v1alpha1.DefaultBackend(ge.String(), ge.backendSpecs()); err != nil {
		return []findings.Finding{findings.About(ge.obj, findings.Error, "exactly-one-default", err.Error()).Because(v1alpha1.ReasonNoDefaultBackend)}, false
	}
	return nil, true
}

// checkReadableBackends: a backend that could not be decoded but names
// the Glance keeps it from being rendered without it.
func checkReadableBackends(ge *glanceEntry) ([]findings.Finding, bool) {
	var results []findings.Finding
	for _, name := range ge.broken {
		results = append(results, findings.About(ge.obj, findings.Error, "backend-unreadable", fmt.Sprintf(
			"GlanceBackend %s attached to Glance %s could not be read (see its errors); nothing is rendered without it", name, ge.g.Name)))
	}
	return results, len(ge.broken) == 0
}

// checkImageReference: the glance-api image the function writes is one a
// kubelet can pull. The CRD's patterns judge repository, tag and digest
// one by one (a repository may hold a ':', which is a registry port only
// before its first '/'); their join is judged here.
func checkImageReference(ge *glanceEntry) ([]findings.Finding, bool) {
	if !ge.valid {
		return nil, true // the object's own errors (a bad tag, digest or repository) are reported
	}
	if problem := v1alpha1.ImageReferenceProblem(ge.g.Spec.Image.Ref()); problem != "" {
		return []findings.Finding{findings.About(ge.obj, findings.Error, "image-reference", "spec.image: the glance-api image "+problem).At("spec.image.repository")}, false
	}
	return nil, true
}

// checkImageRelease: spec.image's tag names spec.openStackRelease, or
// says nothing about it (a warning: the release cannot be checked).
func checkImageRelease(ge *glanceEntry) ([]findings.Finding, bool) {
	if !ge.valid {
		return nil, true
	}
	errs, unchecked := v1alpha1.ValidateImageRelease(ge.g)
	if len(errs) > 0 {
		rs := findings.Fields(ge.obj, "image-release", errs)
		for i := range rs {
			rs[i] = rs[i].Because(v1alpha1.ReasonImageReleaseMismatch)
		}
		return rs, false
	}
	if unchecked != "" {
		path := "spec.image.tag"
		if ge.g.Spec.Image.Tag == "" {
			path = "spec.image.digest"
		}
		return []findings.Finding{findings.About(ge.obj, findings.Warning, "image-release", unchecked).At(path)}, true
	}
	return nil, true
}

// checkDebugLogsStoreKeys warns of LP #2047688 and LP #2131085: with debug
// on, glance_store logs each S3 store's access key on every upload,
// download and delete (v1alpha1.DebugLogsStoreKeys, measured per release).
func checkDebugLogsStoreKeys(ge *glanceEntry) ([]findings.Finding, bool) {
	g := ge.g
	path, on := g.Spec.EffectiveDebug()
	if !on || len(ge.backends) == 0 || !v1alpha1.DebugLogsStoreKeys(g.Spec.OpenStackRelease) {
		return nil, true
	}
	return []findings.Finding{findings.About(ge.obj, findings.Warning, "debug-logs-store-keys", fmt.Sprintf(
		"debug is on, and Glance %s then logs each S3 store's access key at DEBUG on every upload, download and delete (%s): turn debug off, or keep glance-api's log as secret as the keys",
		g.Spec.OpenStackRelease, v1alpha1.BugDebugLogsKeys)).At(path)}, true
}

// checkLocationsLeakKeys warns when show_image_direct_url or
// show_multiple_locations show every reader an image's location URLs,
// which hold the store's S3 keys before 2026.2
// (v1alpha1.LocationsLeakKeys). A warning, not an error: the seed's own
// samples turn show_image_direct_url on, and its CRs must keep rendering;
// explain blocks the change that turns it on (locations-leak-keys).
func checkLocationsLeakKeys(ge *glanceEntry) ([]findings.Finding, bool) {
	var rs []findings.Finding
	for _, e := range v1alpha1.LocationsLeakKeys(ge.g.Spec.OpenStackRelease, ge.g.Spec.ExtraConfig, len(ge.backends)) {
		rs = append(rs, findings.About(ge.obj, findings.Warning, "locations-leak-keys", e.Detail).At(e.Field))
	}
	return rs, true
}

// checkWorkersUnderUWSGI warns that spec.apiServer.workers sizes nothing
// from 2026.1: uWSGI runs glance-api there with spec.apiServer.uwsgi's
// processes and threads (the seed's newer webhook deprecates workers for
// this; glance-krm keeps it for its releases before 2026.1, where the
// eventlet server still reads it).
func checkWorkersUnderUWSGI(ge *glanceEntry) ([]findings.Finding, bool) {
	s := &ge.g.Spec
	if s.APIServer == nil || s.APIServer.Workers == nil || !s.UsesUWSGI() {
		return nil, true
	}
	p, t := s.APIConcurrency()
	return []findings.Finding{findings.About(ge.obj, findings.Warning, "workers-under-uwsgi", fmt.Sprintf(
		"spec.apiServer.workers has no effect on %s: glance-api runs under uWSGI from %s with spec.apiServer.uwsgi's %d processes of %d threads; size the API there",
		s.OpenStackRelease, v1alpha1.UWSGIFromRelease, p, t)).At("spec.apiServer.workers")}, true
}
