package v1alpha1

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
)

// The seed's worked figures (sizing-calibration.md at 05647bf): 2064Mi
// for two processes of one thread, 4240Mi for four of two.
func TestMemoryForProcesses(t *testing.T) {
	for _, c := range []struct {
		p, t int32
		want string
	}{
		{2, 1, "2064Mi"}, {4, 2, "4240Mi"}, {2, 16, "3024Mi"}, {1, 1, "1040Mi"}, {0, 0, "1040Mi"},
	} {
		got := MemoryForProcesses(GlanceMemoryPerProcess, c.p, c.t)
		if want := resource.MustParse(c.want); got.Cmp(want) != 0 || got.String() != c.want {
			t.Errorf("%d processes × %d threads: %s, want %s", c.p, c.t, got.String(), c.want)
		}
	}
}

func TestWithResourceDefaults(t *testing.T) {
	q := resource.MustParse
	list := func(kv ...string) corev1.ResourceList {
		l := corev1.ResourceList{}
		for i := 0; i < len(kv); i += 2 {
			l[corev1.ResourceName(kv[i])] = q(kv[i+1])
		}
		return l
	}
	for name, c := range map[string]struct {
		in   *corev1.ResourceRequirements
		want corev1.ResourceRequirements
	}{
		"nothing named": {nil, corev1.ResourceRequirements{Requests: list("cpu", "70m", "memory", "368Mi"), Limits: list("memory", "368Mi")}},
		"a memory limit alone gains no request beside it": {&corev1.ResourceRequirements{Limits: list("memory", "1Gi")},
			corev1.ResourceRequirements{Requests: list("cpu", "70m"), Limits: list("memory", "1Gi")}},
		"a CPU limit alone gains no request": {&corev1.ResourceRequirements{Limits: list("cpu", "2")},
			corev1.ResourceRequirements{Requests: list("memory", "368Mi"), Limits: list("cpu", "2", "memory", "368Mi")}},
		"a zero is named": {&corev1.ResourceRequirements{Requests: list("cpu", "0", "memory", "0")},
			corev1.ResourceRequirements{Requests: list("cpu", "0", "memory", "0")}},
		"other resources are kept": {&corev1.ResourceRequirements{Requests: list("ephemeral-storage", "1Gi")},
			corev1.ResourceRequirements{Requests: list("ephemeral-storage", "1Gi", "cpu", "70m", "memory", "368Mi"), Limits: list("memory", "368Mi")}},
	} {
		t.Run(name, func(t *testing.T) {
			var before *corev1.ResourceRequirements
			if c.in != nil {
				before = c.in.DeepCopy()
			}
			got := WithResourceDefaults(c.in, DefaultCPURequest, JobMemory)
			if !equality.Semantic.DeepEqual(got, c.want) {
				t.Errorf("got %v, want %v", got, c.want)
			}
			if c.in != nil && !equality.Semantic.DeepEqual(*c.in, *before) {
				t.Errorf("the block written was changed: %v", c.in)
			}
		})
	}
}

// The API memory follows the launch mode's processes and threads.
func TestAPIResources(t *testing.T) {
	for name, c := range map[string]struct {
		spec GlanceSpec
		mem  string
	}{
		"eventlet, two workers":          {GlanceSpec{OpenStackRelease: "2025.2"}, "2064Mi"},
		"eventlet, four workers":         {GlanceSpec{OpenStackRelease: "2025.1", APIServer: &APIServerSpec{Workers: ptr.To(int32(4))}}, "4112Mi"},
		"eventlet ignores uWSGI threads": {GlanceSpec{OpenStackRelease: "2025.2", APIServer: &APIServerSpec{UWSGI: &UWSGISpec{Threads: 8}}}, "2064Mi"},
		"uWSGI, glance-krm's 2 × 16":     {GlanceSpec{OpenStackRelease: "2026.1"}, "3024Mi"},
		"uWSGI, the seed's 2 × 1":        {GlanceSpec{OpenStackRelease: "2026.2", APIServer: &APIServerSpec{UWSGI: &UWSGISpec{Processes: 2, Threads: 1}}}, "2064Mi"},
	} {
		t.Run(name, func(t *testing.T) {
			r := c.spec.APIResources()
			if got := r.Requests[corev1.ResourceMemory]; got.String() != c.mem {
				t.Errorf("memory request %s, want %s", got.String(), c.mem)
			}
			if got := r.Limits[corev1.ResourceMemory]; got.String() != c.mem {
				t.Errorf("memory limit %s, want %s", got.String(), c.mem)
			}
			if got := r.Requests[corev1.ResourceCPU]; got.String() != "70m" {
				t.Errorf("CPU request %s, want 70m", got.String())
			}
			if _, ok := r.Limits[corev1.ResourceCPU]; ok {
				t.Error("a CPU limit by default")
			}
		})
	}
	side := (&GlanceSpec{ImageCache: &ImageCacheSpec{}}).MaintenanceResources()
	want := corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("25m"), corev1.ResourceMemory: resource.MustParse("256Mi")},
		Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Mi")}}
	if !equality.Semantic.DeepEqual(side, want) {
		t.Errorf("cache-maintenance: %v, want %v", side, want)
	}
	jobs := (&GlanceSpec{Jobs: &JobSpec{Resources: &corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}}).JobResources()
	if got := jobs.Limits[corev1.ResourceMemory]; got.String() != "368Mi" || jobs.Requests.Cpu().String() != "1" {
		t.Errorf("jobs: %v", jobs)
	}
}
