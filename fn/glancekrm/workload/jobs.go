package workload

import (
	"strconv"
	"strings"

	"github.com/c5c3/glance-krm/fn/glancekrm/wire"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

const (
	dbSyncBackoffLimit    = int32(4)
	dbPurgeMaxRows        = 1000
	dbPurgeActiveDeadline = int64(3600)
	// metadefsPath is where the seed's image installs Glance's metadata
	// definitions; Debian's packages keep them at oslo.config's default.
	metadefsPath       = "/var/lib/openstack/etc/glance/metadefs"
	debianMetadefsPath = "/etc/glance/metadefs"
)

// glanceManage runs glance-manage on both of glance-krm's directories:
// its own program name makes oslo.config read glance-manage.conf.d, not
// glance-api.conf.d, by default.
func glanceManage(args string) string {
	return "glance-manage " + wire.ConfigDirFlags(wire.ConfigDirs) + " " + args
}

// dbSyncJob migrates the schema and loads the metadata definitions before
// the API rolls. Its template is immutable, so its name carries a hash
// of its spec: a new image, release or config makes a new Job, which
// runs again, and an unchanged one keeps its name and is not rerun. The
// pod is completed by wire() like the Deployment's (config, credentials).
func dbSyncJob(g *v1alpha1.Glance) *batchv1.Job {
	script := glanceManage("db sync") + " && p=" + metadefsPath + " && { [ -d \"$p\" ] || p=" + debianMetadefsPath + "; } && " +
		glanceManage("db load_metadefs --path \"$p\"")
	labels := jobPodLabels(g.Name, componentDBSync)
	return &batchv1.Job{
		TypeMeta: metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: metav1.ObjectMeta{
			Name: g.Name + "-db-sync", Namespace: g.Namespace,
			Labels:      objectLabels(g.Name, "", podLabels(g.Name, "", componentDBSync)),
			Annotations: map[string]string{annotationSyncWave: "0"},
		},
		Spec: batchv1.JobSpec{
			BackoffLimit: ptr.To(dbSyncBackoffLimit),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					RestartPolicy:     corev1.RestartPolicyNever,
					PriorityClassName: ptr.Deref(g.Spec.Deployment.PriorityClassName, ""),
					SecurityContext:   &corev1.PodSecurityContext{FSGroup: ptr.To(openStackUID)},
					Containers: []corev1.Container{{
						Name: componentDBSync, Image: g.Spec.Image.Ref(),
						Command:         []string{"/bin/sh", "-eu", "-c", script},
						SecurityContext: restricted(),
					}},
				},
			},
		},
	}
}

// dbPurgeCronJob purges soft-deleted rows on spec.dbPurge's schedule.
func dbPurgeCronJob(g *v1alpha1.Glance) *batchv1.CronJob {
	p := g.Spec.DBPurge
	days := strconv.Itoa(int(ptr.Deref(p.RetentionDays, int32(v1alpha1.DefaultDBPurgeRetentionDays))))
	args := " --age_in_days " + days + " --max_rows " + strconv.Itoa(dbPurgeMaxRows)
	script := []string{glanceManage("db purge" + args)}
	if ptr.Deref(p.PurgeImagesTable, false) {
		script = append(script, glanceManage("db purge_images_table"+args))
	}
	schedule := p.Schedule
	if schedule == "" {
		schedule = v1alpha1.DefaultDBPurgeSchedule
	}
	common := commonLabels(g.Name)
	pod := jobPodLabels(g.Name, componentDBPurge)
	return &batchv1.CronJob{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "CronJob"},
		ObjectMeta: metav1.ObjectMeta{Name: g.Name + "-db-purge", Namespace: g.Namespace, Labels: objectLabels(g.Name, "", common)},
		Spec: batchv1.CronJobSpec{
			Schedule:          schedule,
			Suspend:           ptr.To(p.Suspend),
			ConcurrencyPolicy: batchv1.ForbidConcurrent,
			JobTemplate: batchv1.JobTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: common},
				Spec: batchv1.JobSpec{
					ActiveDeadlineSeconds: ptr.To(dbPurgeActiveDeadline),
					Template: corev1.PodTemplateSpec{
						ObjectMeta: metav1.ObjectMeta{Labels: pod},
						Spec: corev1.PodSpec{
							RestartPolicy:   corev1.RestartPolicyOnFailure,
							SecurityContext: &corev1.PodSecurityContext{FSGroup: ptr.To(openStackUID)},
							Containers: []corev1.Container{{
								Name: componentDBPurge, Image: g.Spec.Image.Ref(),
								Command:         []string{"/bin/sh", "-eu", "-c", strings.Join(script, " && ")},
								SecurityContext: restricted(),
							}},
						},
					},
				},
			},
		},
	}
}
