package explain

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

// DrainRecord is what a store drain's Job recorded in its ConfigMap
// (v1alpha1.DrainRecordName): explain lets the store's removal pass once
// the record of the drain the before render holds says Complete with no
// image left in it.
type DrainRecord struct {
	// Name and Namespace are the ConfigMap's; Glance is the Glance it
	// belongs to (namespace/name, from its label).
	Name, Namespace, Glance    string
	From, To, State, Remaining string
	// Job is the drain Job that wrote it (v1alpha1.DrainRecordJob).
	Job string
}

// ReadDrainRecords reads the records among the objects of a file, as
// `kubectl get configmap NAME -o yaml` prints them (one object, or a
// List; an empty List holds none). Objects that are no drain record are
// an error: a reviewer passed the wrong file.
func ReadDrainRecords(b []byte) ([]DrainRecord, error) {
	nodes, err := objects(b)
	if err != nil {
		return nil, err
	}
	var out []DrainRecord
	for _, n := range nodes {
		labels := n.GetLabels()
		if n.GetKind() != "ConfigMap" || labels[v1alpha1.LabelComponent] != v1alpha1.ComponentDrainRecord || labels[v1alpha1.LabelGlance] == "" {
			return nil, fmt.Errorf("%s is no drain record (a ConfigMap labelled %s=%s by a drain Job)", describe(n), v1alpha1.LabelComponent, v1alpha1.ComponentDrainRecord)
		}
		data := n.GetDataMap()
		out = append(out, DrainRecord{Name: n.GetName(), Namespace: n.GetNamespace(), Glance: key(n.GetNamespace(), labels[v1alpha1.LabelGlance]),
			From: data[v1alpha1.DrainRecordFrom], To: data[v1alpha1.DrainRecordTo], State: data[v1alpha1.DrainRecordState],
			Remaining: data[v1alpha1.DrainRecordRemaining], Job: data[v1alpha1.DrainRecordJob]})
	}
	return out, nil
}

// stranding is what a change that strands a store's images needs to
// pass: the drain the before render asked for, recorded complete by its
// own Job, into a store that stays where it is. cleared is true when all
// of that holds; otherwise msg says what is missing. what names the
// change ("is removed", "moves its bucket ...").
func stranding(glance, store, what string, b, a *Glance, records []DrainRecord) (msg string, cleared bool) {
	to := b.DrainsTo[store]
	if to == "" {
		return fmt.Sprintf("store %q %s: the images stored in it become unreachable (Glance keeps each image's location, and no store serves it there); move them first: annotate its GlanceBackend %s: <store> in a commit of its own, and make this change once the drain Job has moved them (docs/day2.md)%s",
			store, what, v1alpha1.AnnotationDrainTo, leakOnRead(a.Release)), false
	}
	name := v1alpha1.DrainRecordName(nameOf(glance), store)
	job := b.DrainJobs[store]
	if job == "" {
		return fmt.Sprintf("store %q %s; its drain into %q was asked for, but the before render holds no drain Job for it, so no record can prove the images moved", store, what, to), false
	}
	if moved := targetMoved(to, b, a); moved != "" {
		return fmt.Sprintf("store %q %s after its drain into %q, but %s in the same commit: the images the drain moved would be stranded there; change the target in a commit of its own", store, what, to, moved), false
	}
	var other *DrainRecord
	for i := range records {
		rec := &records[i]
		if rec.Glance != glance || rec.From != store {
			continue
		}
		if rec.Name != name || rec.Job != job {
			other = rec
			continue
		}
		if rec.State == v1alpha1.DrainComplete && rec.Remaining == "0" && rec.To == to {
			return fmt.Sprintf("store %q %s after its drain into %q, which its record (ConfigMap %s, written by Job %s) says is complete: no image has a location in it", store, what, to, rec.Name, rec.Job), true
		}
		state := rec.State
		if state == "" {
			state = "nothing yet (the Job has not started)"
		}
		return fmt.Sprintf("store %q %s, but its drain into %q is not complete: its record (ConfigMap %s) says %s, into %q, %s images left in it; the change waits until the drain Job %s completes",
			store, what, to, rec.Name, state, rec.To, orUnknown(rec.Remaining), job), false
	}
	if other != nil {
		return fmt.Sprintf("store %q %s; the record given (ConfigMap %s, written by Job %q) is not the record of the drain the before render holds (ConfigMap %s, Job %s): an older drain of a store of the same name proves nothing about the images written since; pass `kubectl get configmap %s -o yaml` once Job %s completes",
			store, what, other.Name, other.Job, name, job, name, job), false
	}
	return fmt.Sprintf("store %q %s; its drain into %q was asked for, but its record was not given: once the drain Job %s completes, pass `kubectl get configmap %s -o yaml` to --drain-record", store, what, to, job, name), false
}

// targetMoved says how a drain's target changes between the renders
// (gone, another host, scheme or bucket): "" when it stays.
func targetMoved(to string, b, a *Glance) string {
	bo, ao := b.Stores[to], a.Stores[to]
	switch {
	case ao == nil:
		return fmt.Sprintf("its target %q leaves the render", to)
	case bo == nil:
		return ""
	case !sameHost(bo[optHost], ao[optHost]):
		return fmt.Sprintf("its target %q moves from host %s to %s", to, bo[optHost], ao[optHost])
	case bo[optBucket] != ao[optBucket]:
		return fmt.Sprintf("its target %q moves from bucket %s to %s", to, bo[optBucket], ao[optBucket])
	}
	return ""
}

const (
	optHost   = "s3_store_host"
	optBucket = "s3_store_bucket"
)

// sameHost tells whether two s3_store_host values put an image's
// location at the same place: glance_store reads a host without a scheme
// as http, and URLs compare without case and without a default port.
func sameHost(a, b string) bool {
	return normalHost(a) == normalHost(b)
}

func normalHost(h string) string {
	if !strings.Contains(h, "://") {
		h = "http://" + h
	}
	u, err := url.Parse(h)
	if err != nil {
		return h
	}
	scheme, host, port := strings.ToLower(u.Scheme), strings.ToLower(u.Hostname()), u.Port()
	if (scheme == "http" && port == "80") || (scheme == "https" && port == "443") {
		port = ""
	}
	if port != "" {
		host += ":" + port
	}
	return scheme + "://" + host + strings.TrimSuffix(u.EscapedPath(), "/")
}

func orUnknown(s string) string {
	if s == "" {
		return "an unknown number of"
	}
	return s
}

func nameOf(glance string) string {
	_, name, _ := strings.Cut(glance, "/")
	return name
}
