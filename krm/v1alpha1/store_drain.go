package v1alpha1

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

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

// The limits the drain's names keep for every valid input (a Glance of
// MaxGlanceNameLength, a store of a DNS subdomain's 253 characters): a
// ConfigMap's name is a DNS subdomain; a Job's is at most 63 characters,
// because its pods carry it in their job-name label.
const (
	maxObjectName = 253
	maxJobName    = 63
	// nameHashLen hex digits of a hash of the full name end a name that
	// had to be shortened, so that two stores never share one.
	nameHashLen = 8
)

// DrainRecordName is the record ConfigMap of the drain of one store,
// <glance>-store-drain-<store>: a stable name, which the function
// renders and explain and the controller look up. A name past a
// ConfigMap's 253 characters is cut and ends in a hash of the whole.
func DrainRecordName(glance, store string) string {
	full := glance + "-store-drain-" + store
	if len(full) <= maxObjectName {
		return full
	}
	return shortened(full, full, maxObjectName)
}

// DrainJobName is the name of a store's drain Job, <glance>-store-drain-
// <store>-<specHash> (JobName): an unchanged drain is not rerun once
// complete, a changed one is.
func DrainJobName(glance, store, specHash string) string {
	return JobName(glance+"-store-drain-"+store, specHash)
}

// JobName is a generated Job's name, base-<specHash>, the hash of its
// spec last. A Job's name is a label value of its pods, so it is kept to
// 63 characters and to a DNS label (dots become dashes): where base does
// not fit, it is cut and a hash of it follows, which tells apart the
// names it cut.
func JobName(base, specHash string) string {
	max := maxJobName - len(specHash) - 1
	if len(base) <= max && !strings.Contains(base, ".") {
		return base + "-" + specHash
	}
	return shortened(strings.ReplaceAll(base, ".", "-"), base, max) + "-" + specHash
}

// shortened is name cut to fit max with the hash of full after it; the
// cut never ends in a dash or a dot (a name's parts end alphanumeric).
func shortened(name, full string, max int) string {
	sum := sha256.Sum256([]byte(full))
	name = strings.TrimRight(name[:min(len(name), max-nameHashLen-1)], "-.")
	return name + "-" + hex.EncodeToString(sum[:])[:nameHashLen]
}

// StoreDrain is one requested drain: images move from From into To
// through the Image API named API, the first (in spec order) that serves
// both stores, whose glance-api can read one and write the other.
// +kubebuilder:object:generate=false
type StoreDrain struct {
	From, To, API string
}

// StoreDrains reads the drain-to annotations of a Glance's attached
// backends (by name, with each annotation's value) against its APIs:
// the leaving store must be no API's default store (new uploads land in
// the default, and its removal would orphan them; a commit that moves the
// default elsewhere passes), the target must be another attached store,
// not itself leaving, and one API must serve both. It returns the valid
// drains, sorted by store.
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
		defaultOf := slices.IndexFunc(apis, func(a ResolvedAPI) bool { return a.Default == from })
		switch {
		case defaultOf >= 0:
			errs[from] = field.Invalid(path, to, fmt.Sprintf("store %q is the default store of Image API %q: new uploads land in the default store and would be orphaned by the store's removal; move the default to another store (isDefault on another GlanceBackend, or the API's defaultBackend) in the same commit as the drain or before it",
				from, apis[defaultOf].Name))
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
