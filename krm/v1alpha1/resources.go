package v1alpha1

import (
	"cmp"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// The seed's newer resource defaults, resolved when the workload is
// generated and never stored in the object (C5C3/cobaltcore
// internal/common/types/resources.go at 06655baf, glance's
// reconcile_deployment.go at 11d2c20a, internal/common/job/pod.go at
// 43f6b745): a resource a block names neither as request nor as limit
// gets a CPU request and no CPU limit (the pod is Burstable, CPU never
// throttled below what the node has spare), and one memory figure as
// request and limit (what the pod reserves is what it may use). What a
// block names, a zero included, is kept as written; a limit named alone
// gains no request beside it (the API server copies the limit).
var (
	// DefaultCPURequest is the CPU request of the API, Job and CronJob
	// containers.
	DefaultCPURequest = resource.MustParse("70m")
	// GlanceMemoryPerProcess is what one glance-api process needs, the
	// seed's calibration of Glance under Tempest (2,063 MiB at two
	// processes on 2026.1).
	GlanceMemoryPerProcess = resource.MustParse("1Gi")
	// JobMemory is the memory of every Job and CronJob container
	// (glance-manage, the store drain): one process, one thread.
	JobMemory = resource.MustParse("368Mi")
	// SidecarCPURequest and SidecarMemory size the cache-maintenance
	// container.
	SidecarCPURequest = resource.MustParse("25m")
	SidecarMemory     = resource.MustParse("256Mi")

	memoryBase           = resource.MustParse("16Mi")
	memoryPerExtraThread = resource.MustParse("32Mi")
)

// MemoryForProcesses is the memory of a container running processes ×
// threads: a base, and per process its own figure plus a small one for
// each thread past the first. Counts below 1 count as 1.
func MemoryForProcesses(perProcess resource.Quantity, processes, threads int32) resource.Quantity {
	p, t := int64(max(processes, 1)), int64(max(threads, 1))
	bytes := memoryBase.Value() + p*(perProcess.Value()+(t-1)*memoryPerExtraThread.Value())
	return *resource.NewQuantity(bytes, resource.BinarySI)
}

// WithResourceDefaults is a copy of r (nil is empty) with cpu as the
// request of a CPU it names neither way and mem as request and limit of a
// memory it names neither way.
func WithResourceDefaults(r *corev1.ResourceRequirements, cpu, mem resource.Quantity) corev1.ResourceRequirements {
	var out corev1.ResourceRequirements
	if r != nil {
		out = *r.DeepCopy()
	}
	named := func(n corev1.ResourceName) bool {
		_, req := out.Requests[n]
		_, limit := out.Limits[n]
		return req || limit
	}
	if !named(corev1.ResourceCPU) {
		out.Requests = with(out.Requests, corev1.ResourceCPU, cpu)
	}
	if !named(corev1.ResourceMemory) {
		out.Requests = with(out.Requests, corev1.ResourceMemory, mem)
		out.Limits = with(out.Limits, corev1.ResourceMemory, mem)
	}
	return out
}

func with(l corev1.ResourceList, n corev1.ResourceName, q resource.Quantity) corev1.ResourceList {
	if l == nil {
		l = corev1.ResourceList{}
	}
	l[n] = q.DeepCopy()
	return l
}

// APIConcurrency is how many processes and threads per process serve the
// API: uWSGI's from 2026.1, the eventlet workers (one thread each, its
// green threads share it) before.
func (s *GlanceSpec) APIConcurrency() (processes, threads int32) {
	a := APIServerSpec{}
	if s.APIServer != nil {
		a = *s.APIServer
	}
	if s.UsesUWSGI() {
		u := UWSGISpec{}
		if a.UWSGI != nil {
			u = *a.UWSGI
		}
		return cmp.Or(u.Processes, DefaultUWSGIProcesses), cmp.Or(u.Threads, DefaultUWSGIThreads)
	}
	if a.Workers != nil && *a.Workers > 0 {
		return *a.Workers, 1
	}
	return DefaultEventletWorkers, 1
}

// APIResources are the glance-api container's resources:
// spec.deployment.resources with the defaults, its memory from
// APIConcurrency.
func (s *GlanceSpec) APIResources() corev1.ResourceRequirements {
	p, t := s.APIConcurrency()
	return WithResourceDefaults(s.Deployment.Resources, DefaultCPURequest, MemoryForProcesses(GlanceMemoryPerProcess, p, t))
}

// MaintenanceResources are the cache-maintenance container's resources.
func (s *GlanceSpec) MaintenanceResources() corev1.ResourceRequirements {
	var r *corev1.ResourceRequirements
	if s.ImageCache != nil {
		r = s.ImageCache.MaintenanceResources
	}
	return WithResourceDefaults(r, SidecarCPURequest, SidecarMemory)
}

// JobResources are the resources of every Job and CronJob container.
func (s *GlanceSpec) JobResources() corev1.ResourceRequirements {
	var r *corev1.ResourceRequirements
	if s.Jobs != nil {
		r = s.Jobs.Resources
	}
	return WithResourceDefaults(r, DefaultCPURequest, JobMemory)
}
