package workload

import (
	"cmp"
	"fmt"
	"strings"
	"time"

	"github.com/c5c3/glance-krm/fn/glancekrm/render"
	"github.com/c5c3/glance-krm/fn/glancekrm/wire"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

// Seed defaults of the workload (spec.deployment leaves them unset).
const (
	defaultReplicas = int32(3)
	// cachePoll is how often the cache-maintenance container measures the
	// cache between passes.
	cachePoll = 30 * time.Second
)

// apiReplicas is an API's replica count; nil under an HPA, which owns it.
func apiReplicas(s *v1alpha1.GlanceSpec, api v1alpha1.GlanceAPISpec) *int32 {
	if s.Autoscaling != nil {
		return nil
	}
	return ptr.To(effectiveReplicas(s, api))
}

func effectiveReplicas(s *v1alpha1.GlanceSpec, api v1alpha1.GlanceAPISpec) int32 {
	if api.Replicas != nil {
		return *api.Replicas
	}
	return cmp.Or(s.Deployment.Replicas, defaultReplicas)
}

// deployment is one API's glance-api Deployment before wiring: wire()
// then adds the config and credentials volumes and the credentials init
// container, exactly as it does to a hand-written one.
func deployment(g *v1alpha1.Glance, api v1alpha1.GlanceAPISpec) *appsv1.Deployment {
	s := &g.Spec
	instance := instanceOf(g.Name, api.Name)
	pod := podLabels(g.Name, api.Name, componentAPI)
	d := &appsv1.Deployment{
		TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{
			Name: instance, Namespace: g.Namespace,
			Labels: objectLabels(g.Name, api.Name, pod),
		},
		Spec: appsv1.DeploymentSpec{
			Replicas: apiReplicas(s, api),
			Selector: &metav1.LabelSelector{MatchLabels: selectorLabels(instance)},
			Strategy: strategy(s.Deployment),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: pod},
				Spec: corev1.PodSpec{
					TerminationGracePeriodSeconds: ptr.To(s.TerminationGraceSeconds()),
					TopologySpreadConstraints:     spread(s.Deployment, selectorLabels(instance)),
					PriorityClassName:             ptr.Deref(s.Deployment.PriorityClassName, ""),
					NodeSelector:                  s.Deployment.NodeSelector,
					Tolerations:                   s.Deployment.Tolerations,
					Affinity:                      s.Deployment.Affinity.DeepCopy(),
					SecurityContext:               &corev1.PodSecurityContext{FSGroup: ptr.To(openStackUID)},
					Containers:                    []corev1.Container{apiContainer(g)},
					Volumes: []corev1.Volume{
						emptyDir("staging", stagingLimit(s)),
						emptyDir("tasks-work", stagingLimit(s)),
					},
				},
			},
		},
	}
	if s.ImageCache != nil {
		limit := ptr.Deref(s.ImageCache.SizeLimit, v1alpha1.DefaultImageCacheSizeLimit)
		ps := &d.Spec.Template.Spec
		ps.Volumes = append(ps.Volumes, emptyDir("image-cache", &limit))
		ps.Containers[0].VolumeMounts = append(ps.Containers[0].VolumeMounts, corev1.VolumeMount{Name: "image-cache", MountPath: v1alpha1.PodImageCacheDir})
		ps.Containers = append(ps.Containers, cacheMaintenance(g))
	}
	return d
}

// The probes ask glance's /healthcheck with explicit timeouts: an answer
// needs a free worker (an eventlet green thread, a uWSGI thread), so a
// pod busy with long transfers answers late, not never. Liveness gives
// it a minute before a restart, which would cut every transfer. The
// startup probe holds liveness off for up to five minutes of a cold start
// (the seed's newer figures: its glance-api took 66 to 90 s to start on a
// busy node), so a slow start is waited for, not restarted.
var (
	startupProbe   = probeTiming{period: 10, timeout: 8, failures: 30}
	livenessProbe  = probeTiming{initialDelay: 15, period: 20, timeout: 10, failures: 3}
	readinessProbe = probeTiming{initialDelay: 10, period: 10, timeout: 10, failures: 3}
)

type probeTiming struct{ initialDelay, period, timeout, failures int32 }

func (p probeTiming) probe() *corev1.Probe {
	return &corev1.Probe{
		ProbeHandler:        corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthcheck", Port: intstr.FromInt32(v1alpha1.APIPort)}},
		InitialDelaySeconds: p.initialDelay, PeriodSeconds: p.period, TimeoutSeconds: p.timeout, FailureThreshold: p.failures,
		SuccessThreshold: 1,
	}
}

func apiContainer(g *v1alpha1.Glance) corev1.Container {
	s := &g.Spec
	return corev1.Container{
		Name:            v1alpha1.GlanceAPIContainer,
		Image:           s.Image.Ref(),
		Command:         launchCommand(s),
		Ports:           []corev1.ContainerPort{{Name: "glance-api", ContainerPort: v1alpha1.APIPort}},
		Resources:       s.APIResources(),
		SecurityContext: restricted(),
		StartupProbe:    startupProbe.probe(),
		LivenessProbe:   livenessProbe.probe(),
		ReadinessProbe:  readinessProbe.probe(),
		Lifecycle: &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{
			"/bin/sh", "-c", drainScript(s)}}}},
		VolumeMounts: []corev1.VolumeMount{
			{Name: "staging", MountPath: v1alpha1.PodStagingDir},
			{Name: "tasks-work", MountPath: v1alpha1.PodTasksDir},
		},
	}
}

// drainScript is the preStop hook: the seed's sleep, while the endpoints
// drop the pod, then a wait (at most DrainSeconds) until no connection to
// the API port is open: with Connection: close (uWSGI) and http_keepalive
// off (eventlet), only running requests hold one. Both servers need it.
// The eventlet server's workers die on SIGTERM at once. uWSGI's graceful
// stop waits for its workers only: the bytes its HTTP router still holds
// for a slow client were lost with the pod's network on the node, and the
// client's download hung. A connection counts until the client has every
// byte: glance may have closed it with megabytes still in the send buffer
// for a slow reader (FIN_WAIT1), and those went with the pod too. The hook
// reads the pod's sockets on the API port from /proc/net/tcp{,6}, in the
// states where bytes may still be unsent (01 ESTABLISHED, 04 FIN_WAIT1,
// 08 CLOSE_WAIT, 09 LAST_ACK, 0B CLOSING), so it needs nothing but a shell
// in the image, and says what it waited for in the container's log (its
// stderr, /proc/1/fd/2).
func drainScript(s *v1alpha1.GlanceSpec) string {
	return strings.Join([]string{
		fmt.Sprintf("sleep %d", s.PreStopSleepSeconds()),
		fmt.Sprintf(`open() { cat /proc/net/tcp /proc/net/tcp6 2>/dev/null | grep -cE '^ *[0-9]+: [0-9A-F]+:%04X [0-9A-F]+:[0-9A-F]+ (01|04|08|09|0B) '; }`, v1alpha1.APIPort),
		fmt.Sprintf(`i=0; n=$(open); while [ "$n" -gt 0 ] && [ "$i" -lt %d ]; do sleep 1; i=$((i + 1)); n=$(open); done`, s.DrainSeconds()),
		`echo "glance-krm preStop: $n connection(s) to the API port open after waiting ${i}s for running requests" > /proc/1/fd/2`,
	}, "; ")
}

// launchCommand starts glance-api: the eventlet server before 2026.1,
// which reads glance-krm's directories by default, and uWSGI from 2026.1,
// whose whole configuration is the rendered glance-api-uwsgi.ini.
func launchCommand(s *v1alpha1.GlanceSpec) []string {
	if !s.UsesUWSGI() {
		return []string{"glance-api"}
	}
	return []string{"uwsgi", "--ini", v1alpha1.MountConfigDir + render.UWSGIFile}
}

// restricted is the restricted Pod Security profile, as the seed's
// containers run: the openstack user of its images.
func restricted() *corev1.SecurityContext {
	return &corev1.SecurityContext{
		AllowPrivilegeEscalation: ptr.To(false),
		RunAsNonRoot:             ptr.To(true),
		RunAsUser:                ptr.To(openStackUID),
		RunAsGroup:               ptr.To(openStackUID),
		ReadOnlyRootFilesystem:   ptr.To(true),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
}

func strategy(d v1alpha1.DeploymentSpec) appsv1.DeploymentStrategy {
	if d.Strategy != nil {
		return *d.Strategy.DeepCopy()
	}
	return appsv1.DeploymentStrategy{
		Type: appsv1.RollingUpdateDeploymentStrategyType,
		RollingUpdate: &appsv1.RollingUpdateDeployment{
			MaxUnavailable: ptr.To(intstr.FromInt32(0)),
			MaxSurge:       ptr.To(intstr.FromInt32(1)),
		},
	}
}

// spread keeps replicas apart across zones and nodes unless the Glance
// says how.
func spread(d v1alpha1.DeploymentSpec, selector map[string]string) []corev1.TopologySpreadConstraint {
	if d.TopologySpreadConstraints != nil {
		return d.TopologySpreadConstraints
	}
	var out []corev1.TopologySpreadConstraint
	for _, key := range []string{"topology.kubernetes.io/zone", "kubernetes.io/hostname"} {
		out = append(out, corev1.TopologySpreadConstraint{
			MaxSkew: 1, TopologyKey: key, WhenUnsatisfiable: corev1.ScheduleAnyway,
			LabelSelector: &metav1.LabelSelector{MatchLabels: selector},
		})
	}
	return out
}

// stagingLimit bounds the staging and tasks emptyDirs: spec.staging's
// sizeLimit, 10Gi when unset, none when spec.staging.unbounded.
func stagingLimit(s *v1alpha1.GlanceSpec) *resource.Quantity {
	if s.Staging != nil && s.Staging.Unbounded {
		return nil
	}
	if s.Staging != nil && s.Staging.SizeLimit != nil {
		return ptr.To(s.Staging.SizeLimit.DeepCopy())
	}
	return ptr.To(v1alpha1.DefaultStagingSizeLimit.DeepCopy())
}

func emptyDir(name string, limit *resource.Quantity) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: limit}}}
}

// cacheMaintenance keeps the per-replica image cache bounded: only a
// container in the same pod reaches the emptyDir. It prunes back under
// image_cache_max_size as soon as the cache crosses it (glance enforces
// the bound nowhere else) and at least once per maintenanceInterval, and
// cleans stalled entries; a failing pass is logged and retried, never
// allowed to take the API replica down with it.
func cacheMaintenance(g *v1alpha1.Glance) corev1.Container {
	ic := g.Spec.ImageCache
	interval := v1alpha1.DefaultImageCacheMaintenance
	if ic.MaintenanceInterval != nil {
		interval = ic.MaintenanceInterval.Duration
	}
	flags := wire.ConfigDirFlags(wire.ConfigDirs[:1])
	script := strings.Join([]string{
		fmt.Sprintf("interval=%d poll=%d limit_kib=%d dir=%s waited=0", int64(interval/time.Second), int64(cachePoll/time.Second), g.Spec.ImageCacheMaxSize()/1024, v1alpha1.PodImageCacheDir),
		"while sleep \"$poll\"; do",
		"  waited=$((waited + poll))",
		"  used=$(du -sk --exclude=incomplete --exclude=invalid --exclude=queue \"$dir\" | cut -f1)",
		"  if [ -n \"$used\" ] && [ \"$used\" -lt \"$limit_kib\" ] && [ \"$waited\" -lt \"$interval\" ]; then continue; fi",
		"  waited=0",
		"  glance-cache-pruner " + flags + " || echo \"glance-cache-maintenance failed: glance-cache-pruner (cache at ${used:-unknown} KiB)\" >&2",
		"  glance-cache-cleaner " + flags + " || echo \"glance-cache-maintenance failed: glance-cache-cleaner\" >&2",
		"done",
	}, "\n")
	return corev1.Container{
		Name:            "cache-maintenance",
		Image:           g.Spec.Image.Ref(),
		Command:         []string{"/bin/sh", "-u", "-c", script},
		SecurityContext: restricted(),
		Resources:       g.Spec.MaintenanceResources(),
		VolumeMounts: []corev1.VolumeMount{
			{Name: v1alpha1.VolumeConfig, MountPath: v1alpha1.MountConfigDir, ReadOnly: true},
			{Name: "image-cache", MountPath: v1alpha1.PodImageCacheDir},
		},
	}
}
