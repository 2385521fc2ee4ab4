//go:build e2e

package node_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/restmapper"

	"github.com/c5c3/glance-krm/internal/testenv"
)

// noDrift is Flux's side of "no drift": for two minutes each of the three
// Kustomizations is asked to reconcile again 5 s after the last request
// was handled (annotated reconcile.fluxcd.io/requestedAt, waited for until
// it handled the request, Ready again: with wait, a round takes about a
// minute on the node); no reconcile changes anything: kustomize-controller's
// events name no object configured or created, and every object of the
// three inventories keeps its generation (its resourceVersion when it has
// none, a ConfigMap's or a Service's).
func (f *fluxApp) noDrift(t *testing.T) {
	s := f.s
	since := metav1.Now()
	before := f.inventoryVersions(t)
	if len(before) == 0 {
		t.Fatal("the Kustomizations list no object in their inventories")
	}
	reconciles := 0
	for end := time.Now().Add(2 * time.Minute); time.Now().Before(end); time.Sleep(5 * time.Second) {
		at := time.Now().UTC().Format(time.RFC3339Nano)
		for _, name := range fluxSteps {
			if _, err := s.n.Kubectl(nil, "-n", "flux-system", "annotate", "--overwrite", "kustomization", name, "reconcile.fluxcd.io/requestedAt="+at); err != nil {
				t.Fatal(err)
			}
		}
		testenv.Eventually(t, 2*time.Minute, time.Second, "the reconciles asked for at "+at, func() error {
			for _, name := range fluxSteps {
				k, err := s.resource(t, fluxKustomizations, "flux-system", name)
				if err != nil {
					return err
				}
				if handled, _, _ := unstructured.NestedString(k.Object, "status", "lastHandledReconcileAt"); handled != at || !readyAt(k, "") {
					return fmt.Errorf("Kustomization %s: handled %q, %v", name, handled, k.Object["status"])
				}
			}
			return nil
		})
		reconciles++
	}
	after := f.inventoryVersions(t)
	for id, v := range before {
		if after[id] != v {
			t.Errorf("%s changed in the reconciles: %s, then %s", id, v, after[id])
		}
	}
	events, err := s.n.Client.CoreV1().Events("flux-system").List(context.Background(), metav1.ListOptions{FieldSelector: "involvedObject.kind=Kustomization"})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range events.Items {
		if !strings.HasPrefix(e.InvolvedObject.Name, "glance-") || lastSeen(e).Before(&since) {
			continue
		}
		if strings.Contains(e.Message, " configured") || strings.Contains(e.Message, " created") {
			t.Errorf("Kustomization %s changed the cluster in a reconcile with nothing new: %s", e.InvolvedObject.Name, e.Message)
		}
	}
	t.Logf("%d reconciles of each Kustomization in 2 minutes; %d objects unchanged", reconciles, len(before))
}

// lastSeen is when an event last happened, whichever field its recorder
// wrote.
func lastSeen(e corev1.Event) *metav1.Time {
	if !e.LastTimestamp.IsZero() {
		return &e.LastTimestamp
	}
	if !e.EventTime.IsZero() {
		return &metav1.Time{Time: e.EventTime.Time}
	}
	return &e.FirstTimestamp
}

// inventoryVersions reads every object the three Kustomizations applied
// (their status.inventory): its generation, or its resourceVersion when
// it has none.
func (f *fluxApp) inventoryVersions(t *testing.T) map[string]string {
	t.Helper()
	s := f.s
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(discovery.NewDiscoveryClientForConfigOrDie(s.n.Config)))
	out := map[string]string{}
	for _, name := range fluxSteps {
		k, err := s.resource(t, fluxKustomizations, "flux-system", name)
		if err != nil {
			t.Fatal(err)
		}
		entries, _, _ := unstructured.NestedSlice(k.Object, "status", "inventory", "entries")
		for _, e := range entries {
			m, _ := e.(map[string]any)
			id, _ := m["id"].(string)
			version, _ := m["v"].(string)
			// namespace_name_group_kind, as Flux's inventory writes it
			parts := strings.Split(id, "_")
			if len(parts) != 4 {
				t.Fatalf("inventory entry %q", id)
			}
			mapping, err := mapper.RESTMapping(schema.GroupKind{Group: parts[2], Kind: parts[3]}, version)
			if err != nil {
				t.Fatal(err)
			}
			obj, err := s.resource(t, mapping.Resource, parts[0], parts[1])
			if err != nil {
				t.Fatalf("%s: %v", id, err)
			}
			if g := obj.GetGeneration(); g > 0 {
				out[id] = fmt.Sprint("generation ", g)
			} else {
				out[id] = "resourceVersion " + obj.GetResourceVersion()
			}
		}
	}
	return out
}
