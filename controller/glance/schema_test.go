package glance

import (
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

func runningJob(glance, name, release string) batchv1.Job {
	j := manageJob(glance, name, release, true)
	j.Status.Conditions = nil
	return j
}

func manageJob(glance, name, release string, done bool) batchv1.Job {
	j := batchv1.Job{ObjectMeta: metav1.ObjectMeta{
		Name:        name,
		Labels:      map[string]string{v1alpha1.LabelGlance: glance},
		Annotations: map[string]string{v1alpha1.AnnotationRelease: release},
	}}
	if done {
		j.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}
	} else {
		j.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobFailed, Status: corev1.ConditionTrue}}
	}
	return j
}

// TestJudgeSchema: the newest completed glance-manage Job of the Glance
// (or the status, when newer) is the installed release, reached from the
// status only along valid paths; the spec's release is judged against it
// with the release rule's reasons.
func TestJudgeSchema(t *testing.T) {
	for name, tc := range map[string]struct {
		spec, status string
		jobs         []batchv1.Job
		installed    string
		reason       string // "" for no condition
		refused      bool
		says         string
	}{
		"no Job: nothing known": {spec: "2025.2"},
		"only a failed Job":     {spec: "2025.2", jobs: []batchv1.Job{manageJob("glance", "a", "2025.2", false)}},
		"the first db-sync running": {spec: "2025.2", jobs: []batchv1.Job{manageJob("glance", "a", "2025.2", false), runningJob("glance", "c", "2025.2"), runningJob("glance", "b", "2025.2")},
			reason: v1alpha1.ReasonDBSyncInProgress, says: `no glance-manage Job has completed yet; Job "b" is running`},
		"another Glance's running Job": {spec: "2025.2", jobs: []batchv1.Job{runningJob("other", "a", "2025.2")}},
		"another Glance's Job":         {spec: "2025.2", jobs: []batchv1.Job{manageJob("other", "a", "2025.2", true)}},
		"a Job without a release series": {spec: "2025.2",
			jobs: []batchv1.Job{manageJob("glance", "a", "latest", true)}},
		"synced": {spec: "2025.2", jobs: []batchv1.Job{manageJob("glance", "glance-db-sync-1", "2025.2", true)},
			installed: "2025.2", reason: v1alpha1.ReasonDatabaseSynced, says: `Job "glance-db-sync-1"`},
		"the next release waits for its Job": {spec: "2026.1",
			jobs:      []batchv1.Job{manageJob("glance", "old", "2025.2", true), manageJob("glance", "new", "2026.1", false)},
			installed: "2025.2", reason: v1alpha1.ReasonDBSyncInProgress, says: "no glance-manage Job of 2026.1 has completed"},
		"SLURP to SLURP waits for its Job": {spec: "2026.1", jobs: []batchv1.Job{manageJob("glance", "a", "2025.1", true)},
			installed: "2025.1", reason: v1alpha1.ReasonDBSyncInProgress},
		"a skip": {spec: "2026.2", jobs: []batchv1.Job{manageJob("glance", "a", "2025.2", true)},
			installed: "2025.2", reason: v1alpha1.ReasonUpgradePathInvalid, refused: true, says: "2025.2 -> 2026.1 -> 2026.2"},
		"a downgrade": {spec: "2025.1", jobs: []batchv1.Job{manageJob("glance", "a", "2025.2", true)},
			installed: "2025.2", reason: v1alpha1.ReasonDowngradeNotSupported, refused: true, says: "goes down from 2025.2 to 2025.1"},
		"the newest Job counts, in any order": {spec: "2025.2",
			jobs:      []batchv1.Job{manageJob("glance", "b", "2025.2", true), manageJob("glance", "a", "2025.1", true)},
			installed: "2025.2", reason: v1alpha1.ReasonDatabaseSynced, says: `Job "b"`},
		"a downgrade's own Job does not lower the schema": {spec: "2025.1",
			jobs:      []batchv1.Job{manageJob("glance", "new", "2025.2", true), manageJob("glance", "old", "2025.1", true)},
			installed: "2025.2", reason: v1alpha1.ReasonDowngradeNotSupported, refused: true},
		"the status outlives a pruned Job": {spec: "2025.1", status: "2025.2",
			installed: "2025.2", reason: v1alpha1.ReasonDowngradeNotSupported, refused: true, says: "status.installedRelease"},
		"the status and a Job of its release: the Job is named": {spec: "2025.2", status: "2025.2",
			jobs:      []batchv1.Job{manageJob("glance", "glance-db-sync-b", "2025.2", true), manageJob("glance", "glance-db-contract-a", "2025.2", true)},
			installed: "2025.2", reason: v1alpha1.ReasonDatabaseSynced, says: `Job "glance-db-contract-a"`},
		"a newer Job moves the status on": {spec: "2026.1", status: "2025.2",
			jobs:      []batchv1.Job{manageJob("glance", "a", "2026.1", true)},
			installed: "2026.1", reason: v1alpha1.ReasonDatabaseSynced},
		"a status that is no release is ignored": {spec: "2025.2", status: "zed"},
		// Under a GitOps engine the Glance is applied after its Jobs: the
		// skip is seen once its db-sync has run, and stays refused.
		"a Job that skipped a release, though the spec now matches it": {spec: "2026.2", status: "2025.2",
			jobs:      []batchv1.Job{manageJob("glance", "glance-db-sync-skip", "2026.2", true)},
			installed: "2025.2", reason: v1alpha1.ReasonUpgradePathInvalid, refused: true,
			says: `Job "glance-db-sync-skip" migrated the database schema from 2025.2 (status.installedRelease) to 2026.2: openStackRelease jumps from 2025.2 to 2026.2 over 2026.1`},
		// and its upgrade's Jobs run before the Glance says the release.
		"an upgrade's Job before its Glance: ahead, not a downgrade": {spec: "2025.1", status: "2025.1",
			jobs:      []batchv1.Job{manageJob("glance", "glance-db-sync-new", "2025.2", true)},
			installed: "2025.1", reason: v1alpha1.ReasonDBSyncInProgress,
			says: `the database schema is at 2025.2 (Job "glance-db-sync-new"), ahead of spec.openStackRelease 2025.1`},
		"each release in turn, whatever the Jobs' order": {spec: "2026.2", status: "2025.2",
			jobs:      []batchv1.Job{manageJob("glance", "b", "2026.2", true), manageJob("glance", "a", "2026.1", true)},
			installed: "2026.2", reason: v1alpha1.ReasonDatabaseSynced, says: `Job "b"`},
		"SLURP to SLURP by one Job": {spec: "2026.1", status: "2025.1",
			jobs:      []batchv1.Job{manageJob("glance", "a", "2026.1", true)},
			installed: "2026.1", reason: v1alpha1.ReasonDatabaseSynced},
		"the valid path ends before the skip": {spec: "2027.2", status: "2025.2",
			jobs:      []batchv1.Job{manageJob("glance", "a", "2026.1", true), manageJob("glance", "c", "2027.2", true)},
			installed: "2026.1", reason: v1alpha1.ReasonUpgradePathInvalid, refused: true, says: `Job "c" migrated the database schema from 2026.1`},
	} {
		t.Run(name, func(t *testing.T) {
			g := &v1alpha1.Glance{ObjectMeta: metav1.ObjectMeta{Name: "glance"}}
			g.Spec.OpenStackRelease, g.Status.InstalledRelease = tc.spec, tc.status
			got := JudgeSchema(g, tc.jobs)
			if got.Installed != tc.installed || got.Refused != tc.refused {
				t.Errorf("installed %q refused %v, want %q %v", got.Installed, got.Refused, tc.installed, tc.refused)
			}
			switch {
			case tc.reason == "" && got.Condition != nil:
				t.Errorf("want no condition, got %+v", *got.Condition)
			case tc.reason == "":
			case got.Condition == nil:
				t.Errorf("want %s, got no condition", tc.reason)
			case got.Condition.Type != v1alpha1.ConditionDatabaseReady || got.Condition.Reason != tc.reason ||
				got.Condition.OK != (tc.reason == v1alpha1.ReasonDatabaseSynced) || !strings.Contains(got.Condition.Message, tc.says):
				t.Errorf("got %+v, want DatabaseReady %s saying %q", *got.Condition, tc.reason, tc.says)
			}
		})
	}
}

func record(glance, from, to, state, remaining string) corev1.ConfigMap {
	return corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: v1alpha1.DrainRecordName(glance, from), Labels: map[string]string{
			v1alpha1.LabelGlance: glance, v1alpha1.LabelComponent: v1alpha1.ComponentDrainRecord}},
		Data: map[string]string{v1alpha1.DrainRecordFrom: from, v1alpha1.DrainRecordTo: to,
			v1alpha1.DrainRecordState: state, v1alpha1.DrainRecordRemaining: remaining},
	}
}

// rendered is a record as the render holds it, before its Job writes.
func rendered(glance, from string) corev1.ConfigMap {
	return corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: v1alpha1.DrainRecordName(glance, from),
		Labels:      map[string]string{v1alpha1.LabelGlance: glance, v1alpha1.LabelComponent: v1alpha1.ComponentDrainRecord, v1alpha1.LabelManagedBy: v1alpha1.ManagedByGlanceKRM},
		Annotations: map[string]string{v1alpha1.AnnotationDrainFrom: from}}}
}

// TestJudgeDrains: the drain records say StoresDrained; a failure wins
// over a running drain, which wins over complete ones; a record the
// render holds whose Job has not written is a drain waiting, never a
// complete one.
func TestJudgeDrains(t *testing.T) {
	for name, tc := range map[string]struct {
		records []corev1.ConfigMap
		reason  string
		says    string
	}{
		"no record":        {},
		"another Glance's": {records: []corev1.ConfigMap{record("other", "a", "b", "Complete", "0")}},
		"complete":         {records: []corev1.ConfigMap{record("glance", "a", "b", "Complete", "0")}, reason: v1alpha1.ReasonDrainComplete, says: "a into b"},
		"complete, 2 left": {records: []corev1.ConfigMap{record("glance", "a", "b", "Complete", "2")}, reason: v1alpha1.ReasonDrainInProgress, says: "2 images left"},
		"running":          {records: []corev1.ConfigMap{record("glance", "a", "b", "Complete", "0"), record("glance", "c", "b", "Running", "4")}, reason: v1alpha1.ReasonDrainInProgress, says: "c into b (4 images left)"},
		"rendered, no Job yet": {records: []corev1.ConfigMap{rendered("glance", "a")}, reason: v1alpha1.ReasonDrainInProgress,
			says: "a (waiting for the drain Job: ConfigMap glance-store-drain-a has no state yet)"},
		"one complete, one rendered": {records: []corev1.ConfigMap{record("glance", "c", "b", "Complete", "0"), rendered("glance", "a")}, reason: v1alpha1.ReasonDrainInProgress,
			says: "waiting for the drain Job"},
		"failed": {records: []corev1.ConfigMap{record("glance", "c", "b", "Running", "4"), record("glance", "a", "b", "Failed", "1")}, reason: v1alpha1.ReasonDrainFailed, says: "a into b (1 images left; ConfigMap glance-store-drain-a"},
	} {
		t.Run(name, func(t *testing.T) {
			c := JudgeDrains("glance", tc.records)
			switch {
			case tc.reason == "" && c != nil:
				t.Errorf("want no condition, got %+v", *c)
			case tc.reason == "":
			case c == nil || c.Type != v1alpha1.ConditionStoresDrained || c.Reason != tc.reason || c.OK != (tc.reason == v1alpha1.ReasonDrainComplete) || !strings.Contains(c.Message, tc.says):
				t.Errorf("got %+v, want StoresDrained %s saying %q", c, tc.reason, tc.says)
			}
		})
	}
}
