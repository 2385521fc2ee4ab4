//go:build e2e

package node_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/c5c3/glance-krm/internal/testenv"
)

// Flux's store drain: the store that is not the default (primary, after
// the flip) drains into the default, as two publications.
const fluxDrainFrom, fluxDrainTo = "primary", "secondary"

// fluxDrain is docs/day2.md's first commit as a publication: the store
// annotated to drain into the default, which explain lists; Flux applies
// the drain's script and record in its first step and the Job in its last,
// whose wait ends when the Job and the Glance are done: the record says
// Complete, every image the store held is in the default alone, and the
// Glance StoresDrained.
func (f *fluxApp) fluxDrain(t *testing.T) {
	s := f.s
	ctx, cancel := withTimeout(5 * time.Minute)
	defer cancel()
	held, err := s.glance.imagesIn(ctx, fluxDrainFrom)
	if err != nil {
		t.Fatal(err)
	}
	if len(held) == 0 {
		t.Fatalf("no image in %s to drain", fluxDrainFrom)
	}
	f.drained = map[string][32]byte{}
	for _, id := range held {
		sum, _, err := s.glance.sum(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		f.drained[id] = sum
	}
	before := s.render(t, "flux-before-drain")
	meta := "  name: " + fluxDrainFrom + "\n  namespace: " + s.ns + "\n"
	s.edit(t, meta, meta+"  annotations:\n    glance.openstack.c5c3.io/drain-to: "+fluxDrainTo+"\n")
	f.draining = s.render(t, "flux-draining")
	if out, code := s.explain(t, before, f.draining); code != 0 || !strings.Contains(out, "store "+fluxDrainFrom+" drains into "+fluxDrainTo) {
		t.Fatalf("explain of the drain: exit %d, want 0 and the drain listed:\n%s", code, out)
	}
	defer hold(rolloutSlots)()
	began := f.publish(t)
	f.waitReady(t, 15*time.Minute)
	gitopsBench.record("Flux", s.rel.name, "store drain ("+fmt.Sprint(len(held))+" images)", time.Since(began))
	name := "glance-store-drain-" + fluxDrainFrom
	out, err := s.n.Kubectl(nil, "-n", s.ns, "get", "configmap", name, "-o", "yaml")
	if err != nil {
		t.Fatal(err)
	}
	s.noCredential(t, "the record", string(out))
	f.record = filepath.Join(s.t.TempDir(), "flux-drained.yaml")
	if err := os.WriteFile(f.record, out, 0o600); err != nil {
		t.Fatal(err)
	}
	cm, err := s.n.Client.CoreV1().ConfigMaps(s.ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var rec struct {
		Moved []string `json:"moved"`
	}
	if err := json.Unmarshal([]byte(cm.Data["record.json"]), &rec); err != nil {
		t.Fatal(err)
	}
	if cm.Data["state"] != "Complete" || cm.Data["remaining"] != "0" || cm.Data["from"] != fluxDrainFrom || cm.Data["to"] != fluxDrainTo {
		t.Errorf("the record: %v, want Complete, 0 left, %s into %s", cm.Data, fluxDrainFrom, fluxDrainTo)
	}
	// The record is the last run's (docs/day2.md): a Job whose first pod
	// failed on one image (a copy-image that failed under load, on a CI
	// run) and whose retry moved it names that image alone. What holds
	// whatever the runs were: Glance has every image the store held in
	// the target alone, and so every image the record names. The record
	// may name one the listing above did not hold: an image that reached
	// the store between that listing and the drain's own (a CI run saw
	// one), which the drain must then have moved like the others.
	if len(rec.Moved) == 0 {
		t.Errorf("the record moved nothing: %v", cm.Data)
	}
	after, cancelAfter := withTimeout(5 * time.Minute)
	defer cancelAfter()
	for _, id := range rec.Moved {
		if slices.Contains(held, id) {
			continue
		}
		t.Logf("the record moved image %s, which the listing of %s above did not show (it got there after it)", id, fluxDrainFrom)
		held = append(held, id)
	}
	for _, id := range held {
		img, err := s.glance.image(after, id)
		if err != nil {
			t.Fatal(err)
		}
		if img["stores"] != fluxDrainTo {
			t.Errorf("image %s, which was in %s, is in stores %q after the drain, want %s alone", id, fluxDrainFrom, img["stores"], fluxDrainTo)
		}
	}
	s.waitCondition(t, "glances", "glance", "StoresDrained", metav1.ConditionTrue, "")
}

// fluxRemoval is the second commit: the drained store's GlanceBackend
// removed, which explain blocks without the record and passes with the
// live one; Flux rolls the pods out without it and prunes the
// GlanceBackend in its last step; every image the store held downloads
// byte-identical from the default alone, and none is left in its bucket.
func (f *fluxApp) fluxRemoval(t *testing.T) {
	s := f.s
	if f.record == "" {
		t.Fatal("no record of the drain")
	}
	s.removeBackend(t, fluxDrainFrom)
	removed := s.render(t, "flux-removed")
	if out, code := s.explain(t, f.draining, removed); code != 1 {
		t.Errorf("explain of the removal without the record: exit %d, want 1:\n%s", code, out)
	}
	if out, code := s.explain(t, "--drain-record", f.record, f.draining, removed); code != 0 || !strings.Contains(out, "says is complete") {
		t.Fatalf("explain of the removal with the record: exit %d, want 0:\n%s", code, out)
	}
	defer hold(rolloutSlots)()
	began := f.publish(t)
	f.waitReady(t, 15*time.Minute)
	gitopsBench.record("Flux", s.rel.name, "store removal", time.Since(began))
	testenv.Eventually(t, 2*time.Minute, 2*time.Second, "GlanceBackend "+fluxDrainFrom+" pruned", func() error {
		_, err := s.n.Kubectl(nil, "-n", s.ns, "get", "glancebackend", fluxDrainFrom)
		if err == nil {
			return fmt.Errorf("GlanceBackend %s is still there", fluxDrainFrom)
		}
		if !strings.Contains(err.Error(), "NotFound") && !apierrors.IsNotFound(err) {
			return err
		}
		return nil
	})
	ctx, cancel := withTimeout(5 * time.Minute)
	defer cancel()
	if stores, err := s.glance.stores(ctx); err != nil || len(stores) != 1 || !stores[fluxDrainTo] {
		t.Errorf("GET /v2/info/stores after the removal: %v, %v; want %s alone", stores, err, fluxDrainTo)
	}
	for id, want := range f.drained {
		img, err := s.glance.image(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if img["stores"] != fluxDrainTo {
			t.Errorf("image %s is in stores %q, want %s alone", id, img["stores"], fluxDrainTo)
		}
		if got, _, err := s.glance.sum(ctx, id); err != nil || got != want {
			t.Errorf("image %s: %v, the same bytes as before the drain: %v", id, err, got == want)
		}
		if s.inBucket(t, bucket(s.rel, 1), id) {
			t.Errorf("image %s still has data in %s's bucket", id, fluxDrainFrom)
		}
	}
}

// imagesIn is every active image with a location in store, as the list API
// shows them to this client (visibility=all).
func (g *glanceClient) imagesIn(ctx context.Context, store string) ([]string, error) {
	resp, err := g.do(ctx, "list", http.MethodGet, "/v2/images?limit=1000&visibility=all&status=active", nil, http.StatusOK, nil)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	var page struct{ Images []map[string]any }
	if err := json.NewDecoder(resp.Body).Decode(&page); err != nil {
		return nil, err
	}
	var ids []string
	for _, img := range page.Images {
		for _, st := range strings.Split(fmt.Sprint(img["stores"]), ",") {
			if st == store {
				ids = append(ids, fmt.Sprint(img["id"]))
			}
		}
	}
	return ids, nil
}
