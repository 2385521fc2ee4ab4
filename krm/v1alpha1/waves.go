package v1alpha1

import "strconv"

// The order a Glance is applied in, one model for every GitOps engine:
// Argo CD reads it as sync waves, and hack/flux-prerender.sh writes it as
// three folders that three Flux Kustomizations apply one after the other
// (dependsOn, wait). Argo CD waits for a wave to be healthy before it
// applies the next one and fails the sync on a Degraded object there, so
// no object may sit in a wave before what its health depends on:
//
//   - WavePrepare: what pods need before they start and can be healthy
//     alone: the rendered ConfigMaps and Secrets, Services,
//     NetworkPolicies, RBAC, the drain's script and record, and the
//     db-sync Job (expand, migrate), which must complete.
//   - WaveWorkload: the Deployments (a hand-written workload the function
//     wires too), healthy once rolled out with the old pods gone.
//   - WaveAfter: what needs the new pods or must wait for the old ones to
//     go: the db-contract Job, the store drains, the
//     HorizontalPodAutoscaler (Degraded while its target is missing or
//     its pods have no metrics), the PodDisruptionBudget, the HTTPRoute,
//     the db-purge CronJob, and the Glance and GlanceBackend themselves,
//     whose health reads all of the above.
//
// Waves, not hooks: a hook runs on every sync, a wave applies an object
// like any other, so a Job whose name carries the hash of its spec runs
// once per spec, and the objects stay in the application's inventory.
const (
	AnnotationArgoCDSyncWave = "argocd.argoproj.io/sync-wave"
	WavePrepare              = 0
	WaveWorkload             = 1
	WaveAfter                = 2
)

// WaveAnnotation is the sync-wave annotation's value for a wave.
func WaveAnnotation(wave int) string { return strconv.Itoa(wave) }

// WaveOf is an object's wave as Argo CD reads it (gitops-engine's
// syncwaves.Wave): the sync-wave annotation when it is an integer, else
// Helm's hook weight when that is one, else 0.
func WaveOf(annotations map[string]string) int {
	for _, k := range []string{AnnotationArgoCDSyncWave, annotationHelmHookWeight} {
		if v, ok := annotations[k]; ok {
			if n, err := strconv.Atoi(v); err == nil {
				return n
			}
		}
	}
	return 0
}

const annotationHelmHookWeight = "helm.sh/hook-weight"
