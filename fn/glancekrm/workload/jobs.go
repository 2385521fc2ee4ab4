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

// dbSyncJob is the first half of Glance's own rolling upgrade, run before
// the API rolls: `db expand` adds the new release's tables and columns,
// `db migrate` moves the data, and the metadata definitions are loaded;
// the old glance-api keeps serving on the expanded schema. An empty
// database (`db version`: no alembic head yet) is made whole first by `db
// sync`, Glance's offline install path: no pod serves yet, and the rolling
// path would build it through every historical expand, triggers included,
// and leave their removal to db-contract while the new pods serve — whose
// first statement (ocata_contract01: drop images.is_public, then its
// triggers) fails every image create in between (a node run saw a 500).
// Expand and migrate then say the schema is up to date. On a schema
// already there each is a no-op. Its template is immutable, so its name carries a
// hash of its spec: a new image, release or config makes a new Job,
// which runs again, and an unchanged one keeps its name and is not rerun.
// The pod is completed by wire() like the Deployment's (config,
// credentials). It keeps the seed's name, db-sync.
func dbSyncJob(g *v1alpha1.Glance) *batchv1.Job {
	script := "if " + glanceManage("db version") + " | grep -q 'not under migration control'; then " + glanceManage("db sync") + "; fi && " +
		glanceManage("db expand") + " && " + glanceManage("db migrate") +
		" && p=" + metadefsPath + " && { [ -d \"$p\" ] || p=" + debianMetadefsPath + "; } && " +
		glanceManage("db load_metadefs --path \"$p\"")
	return dbJob(g, componentDBSync, script)
}

// dbContractJob is the second half: `db contract` drops what only the old
// release read, so it runs once the old pods are gone — after the
// Deployments are healthy (Argo CD's wave 2 after their wave 1, waves.go;
// kpt's depends-on names them). Glance refuses it while a data migration
// is pending, and it is a no-op on a contracted schema.
func dbContractJob(g *v1alpha1.Glance, deployments []string) *batchv1.Job {
	j := dbJob(g, componentDBContract, glanceManage("db contract"))
	refs := make([]string, 0, len(deployments))
	for _, d := range deployments {
		refs = append(refs, "apps/namespaces/"+g.Namespace+"/Deployment/"+d)
	}
	j.Annotations[annotationDependsOn] = strings.Join(refs, ",")
	return j
}

// dbJob is a glance-manage Job of the Glance's image.
func dbJob(g *v1alpha1.Glance, component, script string) *batchv1.Job {
	labels := jobPodLabels(g.Name, component)
	return &batchv1.Job{
		TypeMeta: metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: metav1.ObjectMeta{
			Name: g.Name + "-" + component, Namespace: g.Namespace,
			Labels:      objectLabels(g.Name, "", podLabels(g.Name, "", component)),
			Annotations: map[string]string{v1alpha1.AnnotationRelease: g.Spec.OpenStackRelease},
		},
		Spec: batchv1.JobSpec{
			BackoffLimit: ptr.To(dbSyncBackoffLimit),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: jobPod(g, corev1.PodSpec{
					RestartPolicy:   corev1.RestartPolicyNever,
					SecurityContext: &corev1.PodSecurityContext{FSGroup: ptr.To(openStackUID)},
					Containers: []corev1.Container{{
						Name: component, Image: g.Spec.Image.Ref(),
						Command:         []string{"/bin/sh", "-eu", "-c", script},
						SecurityContext: restricted(),
					}},
				}),
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
						Spec: jobPod(g, corev1.PodSpec{
							RestartPolicy:   corev1.RestartPolicyOnFailure,
							SecurityContext: &corev1.PodSecurityContext{FSGroup: ptr.To(openStackUID)},
							Containers: []corev1.Container{{
								Name: componentDBPurge, Image: g.Spec.Image.Ref(),
								Command:         []string{"/bin/sh", "-eu", "-c", strings.Join(script, " && ")},
								SecurityContext: restricted(),
							}},
						}),
					},
				},
			},
		},
	}
}

// jobPod completes the pod of a Job or CronJob by spec.jobs, each field
// it leaves unset following spec.deployment: the priority class, the node
// selector and tolerations as they are, and of the affinity only the
// nodeAffinity (the pod (anti-)affinity terms select API pods). An empty
// value in spec.jobs opts out of its fallback.
func jobPod(g *v1alpha1.Glance, pod corev1.PodSpec) corev1.PodSpec {
	d := &g.Spec.Deployment
	j := ptr.Deref(g.Spec.Jobs, v1alpha1.JobSpec{})
	pod.PriorityClassName = ptr.Deref(j.PriorityClassName, ptr.Deref(d.PriorityClassName, ""))
	pod.NodeSelector = d.NodeSelector
	if j.NodeSelector != nil {
		pod.NodeSelector = j.NodeSelector
	}
	pod.Tolerations = d.Tolerations
	if j.Tolerations != nil {
		pod.Tolerations = j.Tolerations
	}
	switch {
	case j.Affinity != nil:
		pod.Affinity = j.Affinity.DeepCopy()
	case d.Affinity != nil && d.Affinity.NodeAffinity != nil:
		pod.Affinity = &corev1.Affinity{NodeAffinity: d.Affinity.NodeAffinity.DeepCopy()}
	}
	for _, cs := range [][]corev1.Container{pod.InitContainers, pod.Containers} {
		for i := range cs {
			cs[i].Resources = g.Spec.JobResources()
		}
	}
	return pod
}
