package manager_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

// manageJobs are the function's glance-manage Jobs (db-sync, db-contract)
// of severalAPIs' Glance at a release.
func manageJobs(t *testing.T, ns, release string) []*unstructured.Unstructured {
	t.Helper()
	rl := strings.ReplaceAll(strings.ReplaceAll(severalAPIs, "NS", ns), `"2025.2"`, `"`+release+`"`)
	jobs := rendered(t, rl, "Job")
	if len(jobs) != 2 {
		t.Fatalf("%d generated Jobs, want db-sync and db-contract", len(jobs))
	}
	return jobs
}

// complete marks a Job succeeded, as the Job controller would.
func complete(t *testing.T, ns, name string) {
	t.Helper()
	j := &batchv1.Job{}
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, j); err != nil {
		t.Fatal(err)
	}
	now := metav1.NewTime(time.Now())
	j.Status.StartTime, j.Status.CompletionTime, j.Status.Succeeded = &now, &now, 1
	j.Status.Conditions = []batchv1.JobCondition{
		{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, LastTransitionTime: now},
		{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, LastTransitionTime: now},
	}
	if err := k8s.Status().Update(context.Background(), j); err != nil {
		t.Fatal(err)
	}
}

// releaseWarnings counts the Warning events with this reason about a
// Glance.
func releaseWarnings(t *testing.T, ns, reason string) int {
	t.Helper()
	return countEvents(t, ns, func(e eventsv1.Event) bool {
		return e.Reason == reason && e.Type == corev1.EventTypeWarning && e.Regarding.Kind == v1alpha1.GlanceKind
	})
}

// TestDatabaseReadyFromTheJobs: the function's own db-sync and
// db-contract Jobs, completed, say which release the schema is at;
// spec.openStackRelease is judged against it: synced, a valid upgrade
// waiting for its Job, a skip (UpgradePathInvalid) and a downgrade
// refused with one Warning each, and the schema's release remembered in
// status.installedRelease once the Jobs are gone.
func TestDatabaseReadyFromTheJobs(t *testing.T) {
	ctx := context.Background()
	ns := namespace(t)
	for _, o := range rendered(t, strings.ReplaceAll(severalAPIs, "NS", ns), "Glance", "GlanceBackend") {
		create(t, o)
	}
	g := &v1alpha1.Glance{}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "glance"}, g); err != nil {
		t.Fatal(err)
	}
	// Nothing ran yet: nothing is known, nothing is written.
	wantCondition(t, g, v1alpha1.ConditionBackendsReady, F, v1alpha1.ReasonNoDefaultBackend) // no credentials here
	if c, _ := condition(t, g, v1alpha1.ConditionDatabaseReady); c != nil {
		t.Fatalf("DatabaseReady before any Job completed: %+v", c)
	}

	var names []string
	for _, j := range manageJobs(t, ns, "2025.2") {
		create(t, j)
		names = append(names, j.GetName())
	}
	complete(t, ns, names[0])
	wantMessage(t, g, v1alpha1.ConditionDatabaseReady, T, v1alpha1.ReasonDatabaseSynced, "the database schema is at 2025.2")
	if g.Status.InstalledRelease != "2025.2" {
		t.Errorf("status.installedRelease %q, want 2025.2", g.Status.InstalledRelease)
	}

	setRelease := func(r string) { update(t, g, func() { g.Spec.OpenStackRelease = r }) }
	setRelease("2026.2")
	wantMessage(t, g, v1alpha1.ConditionDatabaseReady, F, v1alpha1.ReasonUpgradePathInvalid, "upgrade through each release (2025.2 -> 2026.1 -> 2026.2)")
	eventually(t, "one UpgradePathInvalid warning", func() error {
		if n := releaseWarnings(t, ns, v1alpha1.ReasonUpgradePathInvalid); n != 1 {
			return fmt.Errorf("%d warnings", n)
		}
		return nil
	})

	setRelease("2026.1")
	wantMessage(t, g, v1alpha1.ConditionDatabaseReady, F, v1alpha1.ReasonDBSyncInProgress, "no glance-manage Job of 2026.1 has completed yet")
	next := manageJobs(t, ns, "2026.1")
	for _, j := range next {
		create(t, j)
	}
	complete(t, ns, next[0].GetName())
	wantMessage(t, g, v1alpha1.ConditionDatabaseReady, T, v1alpha1.ReasonDatabaseSynced, "the database schema is at 2026.1")

	// Every Job pruned: the status still knows the schema's release.
	if err := k8s.DeleteAllOf(ctx, &batchv1.Job{}, client.InNamespace(ns), client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
		t.Fatal(err)
	}
	setRelease("2025.2")
	wantMessage(t, g, v1alpha1.ConditionDatabaseReady, F, v1alpha1.ReasonDowngradeNotSupported, "goes down from 2026.1 to 2025.2")
	eventually(t, "one DowngradeNotSupported warning", func() error {
		if n := releaseWarnings(t, ns, v1alpha1.ReasonDowngradeNotSupported); n != 1 {
			return fmt.Errorf("%d warnings", n)
		}
		return nil
	})
	if n := releaseWarnings(t, ns, v1alpha1.ReasonUpgradePathInvalid); n != 1 {
		t.Errorf("%d UpgradePathInvalid warnings after the downgrade, want still 1", n)
	}
}

// TestStoresDrainedFromTheRecords: a store drain's record, as its Job
// writes it, says StoresDrained on the Glance: running, failed (one
// Warning), complete.
func TestStoresDrainedFromTheRecords(t *testing.T) {
	ns := namespace(t)
	g := glance(ns, "glance")
	create(t, g, backend(ns, "old", "glance", false, "c"), backend(ns, "new", "glance", true, "c"))
	rec := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: v1alpha1.DrainRecordName("glance", "old"), Namespace: ns, Labels: map[string]string{
			v1alpha1.LabelGlance: "glance", v1alpha1.LabelComponent: v1alpha1.ComponentDrainRecord, v1alpha1.LabelManagedBy: v1alpha1.ManagedByGlanceKRM}},
		Data: map[string]string{"from": "old", "to": "new", "state": "Running", "remaining": "5", "record.json": "{}"},
	}
	create(t, rec)
	wantMessage(t, g, v1alpha1.ConditionStoresDrained, F, v1alpha1.ReasonDrainInProgress, "old into new (5 images left)")
	update(t, rec, func() { rec.Data["state"], rec.Data["remaining"] = "Failed", "1" })
	wantMessage(t, g, v1alpha1.ConditionStoresDrained, F, v1alpha1.ReasonDrainFailed, "old into new (1 images left")
	eventually(t, "one DrainFailed warning", func() error {
		if n := releaseWarnings(t, ns, v1alpha1.ReasonDrainFailed); n != 1 {
			return fmt.Errorf("%d warnings", n)
		}
		return nil
	})
	update(t, rec, func() { rec.Data["state"], rec.Data["remaining"] = "Complete", "0" })
	wantMessage(t, g, v1alpha1.ConditionStoresDrained, T, v1alpha1.ReasonDrainComplete, "no image left: old into new")
}
