package v1alpha1

import (
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Retiring a store without losing an image. A GlanceBackend annotated
// glance.openstack.c5c3.io/drain-to: <store> asks for the store drain: a
// generated Job copies every image with a location in this store into the
// named one through Glance's own API (copy-image import), verifies each
// copy against os_hash_value and then removes this store's location. The
// Job records its progress in the ConfigMap DrainRecordName names; the
// store's removal is a later commit, which explain lets pass once that
// record says Complete. An annotation keeps the seed's CRs as they are.
const (
	AnnotationDrainTo = Group + "/drain-to"
	// AnnotationDrainFrom marks a generated drain Job with the store it
	// drains, so that a reader of the render (explain) finds the drain of
	// a store without parsing the Job's command line.
	AnnotationDrainFrom = Group + "/drain-from"
	// ComponentDrainRecord labels the record ConfigMap the drain Job
	// writes (with LabelGlance and LabelManagedBy).
	ComponentDrainRecord = "drain-record"
	// Keys of the record's data.
	DrainRecordFrom      = "from"
	DrainRecordTo        = "to"
	DrainRecordState     = "state"
	DrainRecordRemaining = "remaining"
	// DrainRecordJob holds the name of the drain Job that wrote the
	// record (the Job's name carries a hash of its spec): explain lets a
	// removal pass only with a record of the drain its before render
	// holds, never an older drain's record of a same-named store.
	DrainRecordJob = "job"
	// EnvDrainJob is the drain container's variable holding its Job's
	// name, which the script writes into DrainRecordJob.
	EnvDrainJob = "GLANCE_KRM_DRAIN_JOB"
	// The record's states: Running while the Job works, Complete when no
	// image has a location in the store any more, Failed when an image
	// could not be moved (its location is kept).
	DrainComplete = "Complete"
	DrainRunning  = "Running"
	DrainFailed   = "Failed"
)

// DrainRecordName is the record ConfigMap of the drain of one store: a
// stable name, which explain and the controller look up.
func DrainRecordName(glance, store string) string {
	return glance + "-store-drain-" + store
}

// StoreDrain is one requested drain: images move from From into To
// through the Image API named API, the first (in spec order) that serves
// both stores, whose glance-api can read one and write the other.
// +kubebuilder:object:generate=false
type StoreDrain struct {
	From, To, API string
}

// DrainJobPrefix starts the name of a store's drain Job, which a hash of
// its spec ends (-<8 hex digits>); a Job's name is at most 63
// characters (its pods' job-name label).
func DrainJobPrefix(glance, store string) string {
	return DrainRecordName(glance, store) + "-"
}

const maxJobName = 63

// StoreDrains reads the drain-to annotations of a Glance's attached
// backends (by name, with each annotation's value) against its APIs:
// the target must be another attached store, not itself leaving, one API
// must serve both, and the drain Job's name must fit. It returns the
// valid drains, sorted by store.
func StoreDrains(glance string, annotations map[string]string, apis []ResolvedAPI) ([]StoreDrain, map[string]*field.Error) {
	errs := map[string]*field.Error{}
	var out []StoreDrain
	path := field.NewPath("metadata", "annotations").Key(AnnotationDrainTo)
	for _, from := range sortedKeys(annotations) {
		to := annotations[from]
		if to == "" {
			continue
		}
		_, toIsAttached := annotations[to]
		switch {
		case len(DrainJobPrefix(glance, from))+8 > maxJobName:
			errs[from] = field.Invalid(path, to, fmt.Sprintf("the drain Job of store %q would be named %s<hash>, longer than a Job's 63 characters: drain it under a shorter Glance or store name", from, DrainJobPrefix(glance, from)))
		case to == from:
			errs[from] = field.Invalid(path, to, "a store cannot drain into itself: name the GlanceBackend its images move to")
		case !toIsAttached:
			errs[from] = field.NotFound(path, to)
			errs[from].Detail = fmt.Sprintf("the images of %q can only move into a GlanceBackend attached to the same Glance", from)
		case annotations[to] != "":
			errs[from] = field.Invalid(path, to, fmt.Sprintf("store %q is itself draining into %q: drain into a store that stays", to, annotations[to]))
		default:
			i := slices.IndexFunc(apis, func(a ResolvedAPI) bool { return slices.Contains(a.Stores, from) && slices.Contains(a.Stores, to) })
			if i < 0 {
				errs[from] = field.Invalid(path, to, fmt.Sprintf("no Image API of the Glance serves both %q and %q: copy-image reads one and writes the other in one glance-api", from, to))
				continue
			}
			out = append(out, StoreDrain{From: from, To: to, API: apis[i].Name})
		}
	}
	return out, errs
}
