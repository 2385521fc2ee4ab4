package explain

import (
	"bytes"
	"fmt"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

// DrainRecord is what a store drain's Job recorded in its ConfigMap
// (v1alpha1.DrainRecordName): explain lets the store's removal pass once
// the record says Complete with no image left in it.
type DrainRecord struct {
	Name, Glance, From, To, State, Remaining string
}

// ReadDrainRecords reads the records among the objects of a file, as
// `kubectl get configmap NAME -o yaml` prints them (one object, or a
// List). Objects that are no drain record are an error: a reviewer
// passed the wrong file.
func ReadDrainRecords(b []byte) ([]DrainRecord, error) {
	nodes, err := (&kio.ByteReader{Reader: bytes.NewReader(b), OmitReaderAnnotations: true}).Read()
	if err != nil {
		return nil, err
	}
	var out []DrainRecord
	for _, n := range nodes {
		if n.GetKind() == "List" {
			items, err := n.Pipe(yaml.Lookup("items"))
			if err != nil || items == nil {
				continue
			}
			els, _ := items.Elements()
			nodes = append(nodes, els...)
			continue
		}
		labels := n.GetLabels()
		if n.GetKind() != "ConfigMap" || labels[v1alpha1.LabelComponent] != v1alpha1.ComponentDrainRecord || labels[v1alpha1.LabelGlance] == "" {
			return nil, fmt.Errorf("%s %s is no drain record (a ConfigMap labelled %s=%s by a drain Job)", n.GetKind(), n.GetName(), v1alpha1.LabelComponent, v1alpha1.ComponentDrainRecord)
		}
		data := n.GetDataMap()
		out = append(out, DrainRecord{Name: n.GetName(), Glance: key(n.GetNamespace(), labels[v1alpha1.LabelGlance]),
			From: data[v1alpha1.DrainRecordFrom], To: data[v1alpha1.DrainRecordTo], State: data[v1alpha1.DrainRecordState],
			Remaining: data[v1alpha1.DrainRecordRemaining]})
	}
	return out, nil
}

// removal is the warning for a store that leaves the render: with the
// drain the before render asked for, what its record says; cleared when
// the record says every image moved into a store that stays.
func removal(glance, store string, b, a *Glance, records []DrainRecord) (msg string, cleared bool) {
	to := b.DrainsTo[store]
	if to == "" {
		return fmt.Sprintf("store %q is removed: the images stored in it become unreachable (Glance keeps each image's location, and no other store serves it); move them first: annotate its GlanceBackend %s: <store> in a commit of its own, and remove the store once the drain Job has moved them (docs/day2.md)%s",
			store, v1alpha1.AnnotationDrainTo, leakOnRead(a.Release)), false
	}
	name := v1alpha1.DrainRecordName(nameOf(glance), store)
	for _, rec := range records {
		if rec.Glance != glance || rec.From != store {
			continue
		}
		_, stays := a.Stores[to]
		if rec.State == v1alpha1.DrainComplete && rec.Remaining == "0" && rec.To == to && stays {
			return fmt.Sprintf("store %q is removed after its drain into %q, which its record (ConfigMap %s) says is complete: no image has a location in it", store, to, rec.Name), true
		}
		return fmt.Sprintf("store %q is removed, but its drain into %q is not complete: its record (ConfigMap %s) says %s, into %q, %s images left in it; the removal waits until the drain Job completes",
			store, to, rec.Name, rec.State, rec.To, rec.Remaining), false
	}
	return fmt.Sprintf("store %q is removed; its drain into %q was asked for, but its record was not given: once the drain Job completes, pass `kubectl get configmap %s -o yaml` to --drain-record", store, to, name), false
}

func nameOf(glance string) string {
	for i := len(glance) - 1; i >= 0; i-- {
		if glance[i] == '/' {
			return glance[i+1:]
		}
	}
	return glance
}
