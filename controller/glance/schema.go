package glance

import (
	"fmt"
	"maps"
	"slices"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/c5c3/glance-krm/controller/conditions"
	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

// Schema is what the cluster tells of a Glance's database schema: the
// release its glance-manage Jobs last migrated it to, and the
// DatabaseReady verdict on spec.openStackRelease against it.
type Schema struct {
	// Installed is the newest release a completed glance-manage Job
	// (db-sync or db-contract, which carry the openstack-release
	// annotation) migrated the schema to, or the status's installedRelease
	// when that is newer: a finished Job may be gone (its TTL, a prune),
	// the schema it migrated is not.
	Installed string
	// Condition is nil when no completed Job nor the status says which
	// release the schema is at and no glance-manage Job runs (a
	// hand-written workload): nothing is known, nothing is judged. The
	// first db-sync still running is DBSyncInProgress: the schema is not
	// there yet, so the Glance is not Ready.
	Condition *conditions.Condition
	// Refused is true when the condition refuses the path (the reasons
	// of v1alpha1.Problem): the reconciler warns once with an Event.
	Refused bool
}

// JudgeSchema judges the release the Glance asks for against the release
// the schema is at, in the words explain and kpt use (v1alpha1.Problem):
// a downgrade, or a skip other than SLURP to SLURP, is refused; a valid
// upgrade waits for its Job; the schema at the spec's release is synced.
//
// The schema's release moves only along valid paths: from the status's
// installedRelease (the release the controller last saw it reach), each
// newer release a completed Job migrated to, oldest first. A completed Job
// whose release that path cannot reach has already migrated the schema
// over a release (under a GitOps engine the Glance is applied after its
// Jobs, so the skip is seen only once its db-sync ran): that is refused
// too, naming the Job, and installedRelease stays where the valid path
// ended, so the refusal holds until someone looks (docs/day2.md).
func JudgeSchema(g *v1alpha1.Glance, jobs []batchv1.Job) Schema {
	installed, job := "", ""
	if newer(g.Status.InstalledRelease, "") {
		installed = g.Status.InstalledRelease
	}
	// The first completed Job by name of each release, for stable messages.
	byRelease := map[string]string{}
	for i := range jobs {
		j := &jobs[i]
		release := j.Annotations[v1alpha1.AnnotationRelease]
		if j.Labels[v1alpha1.LabelGlance] != g.Name || !completed(j) || !newer(release, "") {
			continue
		}
		if first, ok := byRelease[release]; !ok || j.Name < first {
			byRelease[release] = j.Name
		}
	}
	if installed == "" {
		// Nothing seen before: the newest completed Job's release.
		for release, name := range byRelease {
			if installed == "" || newer(release, installed) {
				installed, job = release, name
			}
		}
	} else {
		job = byRelease[installed]
		later := slices.SortedFunc(maps.Keys(byRelease), func(a, b string) int {
			if newer(a, b) {
				return 1
			}
			return -1
		})
		for _, release := range later {
			if !newer(release, installed) {
				continue
			}
			if reason, message := v1alpha1.Problem(installed, release); reason != "" {
				c := conditions.Condition{Type: v1alpha1.ConditionDatabaseReady, Reason: reason,
					Message: fmt.Sprintf("Job %q migrated the database schema from %s (status.installedRelease) to %s: %s", byRelease[release], installed, release, message)}
				return Schema{Installed: installed, Condition: &c, Refused: true}
			}
			installed, job = release, byRelease[release]
		}
	}
	if installed == "" {
		return firstSync(g, jobs)
	}
	want := g.Spec.OpenStackRelease
	// An upgrade in flight under a GitOps engine: its Jobs ran before the
	// Glance saying the new release is applied (Argo CD's last wave,
	// Flux's last step). The spec is still the release the controller last
	// saw, so nothing went down: the schema is ahead of a spec that is
	// about to follow, and the status waits for it (moved on now, it would
	// call the spec a downgrade until then).
	if seen := g.Status.InstalledRelease; want == seen && newer(installed, seen) {
		c := conditions.Condition{Type: v1alpha1.ConditionDatabaseReady, Reason: v1alpha1.ReasonDBSyncInProgress,
			Message: fmt.Sprintf("the database schema is at %s (Job %q), ahead of spec.openStackRelease %s: an upgrade whose Glance is applied after its Jobs", installed, job, want)}
		return Schema{Installed: seen, Condition: &c}
	}
	c := conditions.Condition{Type: v1alpha1.ConditionDatabaseReady}
	by := "status.installedRelease"
	if job != "" {
		by = fmt.Sprintf("Job %q", job)
	}
	reason, message := v1alpha1.Problem(installed, want)
	switch {
	case reason != "":
		c.Reason = reason
		c.Message = fmt.Sprintf("spec.openStackRelease: %s; the database schema is at %s (%s)", message, installed, by)
	case installed == want:
		c.OK, c.Reason = true, v1alpha1.ReasonDatabaseSynced
		c.Message = fmt.Sprintf("the database schema is at %s (%s)", installed, by)
	default:
		c.Reason = v1alpha1.ReasonDBSyncInProgress
		c.Message = fmt.Sprintf("the database schema is at %s (%s); no glance-manage Job of %s has completed yet", installed, by, want)
	}
	return Schema{Installed: installed, Condition: &c, Refused: reason != ""}
}

// firstSync is the verdict before any glance-manage Job completed: in
// progress while one of the Glance's runs (the first by name, for a
// stable message), else nothing known. A failed one says nothing here:
// the Job is Degraded (Argo CD) or not ready (Flux) itself.
func firstSync(g *v1alpha1.Glance, jobs []batchv1.Job) Schema {
	running := ""
	for i := range jobs {
		j := &jobs[i]
		if j.Labels[v1alpha1.LabelGlance] != g.Name || j.Annotations[v1alpha1.AnnotationRelease] == "" || finished(j) {
			continue
		}
		if running == "" || j.Name < running {
			running = j.Name
		}
	}
	if running == "" {
		return Schema{}
	}
	return Schema{Condition: &conditions.Condition{Type: v1alpha1.ConditionDatabaseReady, Reason: v1alpha1.ReasonDBSyncInProgress,
		Message: fmt.Sprintf("no glance-manage Job has completed yet; Job %q is running", running)}}
}

// finished: the Job completed or failed for good.
func finished(j *batchv1.Job) bool {
	return slices.ContainsFunc(j.Status.Conditions, func(c batchv1.JobCondition) bool {
		return (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue
	})
}

func completed(j *batchv1.Job) bool {
	return slices.ContainsFunc(j.Status.Conditions, func(c batchv1.JobCondition) bool {
		return c.Type == batchv1.JobComplete && c.Status == corev1.ConditionTrue
	})
}

// newer tells whether release a is a later release series than b ("" is
// older than every release; a value that is no release series never is).
func newer(a, b string) bool {
	if _, ok := v1alpha1.PathBetween(a, a); !ok {
		return false
	}
	if b == "" {
		return true
	}
	p, ok := v1alpha1.PathBetween(b, a)
	return ok && !p.Downgrade && a != b
}
