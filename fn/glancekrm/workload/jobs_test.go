package workload

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

// The seed's newer spec.jobs: what it leaves unset follows
// spec.deployment, an empty value opts out, and of the Deployment's
// affinity only the nodeAffinity reaches the Job pods.
func TestJobPodFollowsTheDeployment(t *testing.T) {
	nodeAffinity := &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
		NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a"}}}}}}}
	apiAntiAffinity := &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{TopologyKey: "kubernetes.io/hostname"}}}
	deployment := v1alpha1.DeploymentSpec{
		PriorityClassName: ptr.To("openstack-high"),
		NodePlacementSpec: v1alpha1.NodePlacementSpec{
			NodeSelector: map[string]string{"disk": "ssd"},
			Tolerations:  []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpExists}},
			Affinity:     &corev1.Affinity{NodeAffinity: nodeAffinity, PodAntiAffinity: apiAntiAffinity},
		},
	}
	limits := &corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}}
	// A memory limit named alone stays alone; the CPU gets the request.
	limitsDefaulted := corev1.ResourceRequirements{Limits: limits.Limits, Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("70m")}}
	seedDefaults := corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("70m"), corev1.ResourceMemory: resource.MustParse("368Mi")},
		Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("368Mi")}}
	for name, c := range map[string]struct {
		jobs *v1alpha1.JobSpec
		want corev1.PodSpec
	}{
		"no spec.jobs: the Deployment's priority and placement, its nodeAffinity only, the seed's 70m and 368Mi on every container": {
			want: corev1.PodSpec{PriorityClassName: "openstack-high", NodeSelector: map[string]string{"disk": "ssd"},
				Tolerations: deployment.Tolerations, Affinity: &corev1.Affinity{NodeAffinity: nodeAffinity},
				InitContainers: []corev1.Container{{Name: "i", Resources: seedDefaults}},
				Containers:     []corev1.Container{{Name: "a", Resources: seedDefaults}, {Name: "b", Resources: seedDefaults}}},
		},
		"empty values opt out": {
			jobs: &v1alpha1.JobSpec{PriorityClassName: ptr.To(""), NodePlacementSpec: v1alpha1.NodePlacementSpec{
				NodeSelector: map[string]string{}, Tolerations: []corev1.Toleration{}, Affinity: &corev1.Affinity{}}},
			want: corev1.PodSpec{NodeSelector: map[string]string{}, Tolerations: []corev1.Toleration{}, Affinity: &corev1.Affinity{}},
		},
		"spec.jobs' own values, and its resources on every container": {
			jobs: &v1alpha1.JobSpec{PriorityClassName: ptr.To("batch"), Resources: limits,
				NodePlacementSpec: v1alpha1.NodePlacementSpec{NodeSelector: map[string]string{"pool": "jobs"}}},
			want: corev1.PodSpec{PriorityClassName: "batch", NodeSelector: map[string]string{"pool": "jobs"},
				Tolerations: deployment.Tolerations, Affinity: &corev1.Affinity{NodeAffinity: nodeAffinity},
				InitContainers: []corev1.Container{{Name: "i", Resources: limitsDefaulted}},
				Containers:     []corev1.Container{{Name: "a", Resources: limitsDefaulted}, {Name: "b", Resources: limitsDefaulted}}},
		},
	} {
		t.Run(name, func(t *testing.T) {
			g := &v1alpha1.Glance{Spec: v1alpha1.GlanceSpec{Deployment: deployment, Jobs: c.jobs}}
			var in corev1.PodSpec
			if c.want.Containers != nil {
				in.InitContainers = []corev1.Container{{Name: "i"}}
				in.Containers = []corev1.Container{{Name: "a"}, {Name: "b"}}
			}
			if diff := cmp.Diff(c.want, jobPod(g, in)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
