package workload

import (
	"fmt"

	"github.com/kptdev/krm-functions-sdk/go/fn"

	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

// waveOf places a generated object in the order every engine applies a
// Glance in (v1alpha1's waves): no object before what its health needs.
// A kind the table does not know is an error, so that a new kind cannot
// land in the first wave unnoticed.
func waveOf(obj *fn.KubeObject) (int, error) {
	switch obj.GetKind() {
	case "ConfigMap", "Service", "NetworkPolicy", "ServiceAccount", "Role", "RoleBinding":
		// No health of their own, or (a ClusterIP Service) healthy at once:
		// the pods of the later waves mount, reach or run as them.
		return v1alpha1.WavePrepare, nil
	case "Deployment":
		return v1alpha1.WaveWorkload, nil
	case "HorizontalPodAutoscaler", "VerticalPodAutoscaler", "PodDisruptionBudget", "HTTPRoute", "CronJob":
		// An HPA is Degraded while its target is missing (FailedGetScale)
		// or its pods report no metrics yet (FailedGetResourceMetric); a
		// VPA recommends only for pods that run (NoPodsMatched); an
		// HTTPRoute is Degraded while its Service is missing; the db-purge
		// CronJob needs the schema the db-sync Job writes.
		return v1alpha1.WaveAfter, nil
	case "Job":
		switch c := obj.GetLabel(labelAppComponent); c {
		case componentDBSync:
			return v1alpha1.WavePrepare, nil
		case componentDBContract, componentStoreDrain:
			// Once the old pods are gone: contract drops what they read,
			// and a drain copies through the API that serves both stores.
			return v1alpha1.WaveAfter, nil
		default:
			return 0, fmt.Errorf("no sync wave for the Job %s of component %q", obj.GetName(), c)
		}
	}
	return 0, fmt.Errorf("%s %s: no sync wave for this kind", obj.GetKind(), obj.GetName())
}

// setWave writes the wave of a generated object.
func setWave(obj *fn.KubeObject) error {
	w, err := waveOf(obj)
	if err != nil {
		return err
	}
	return obj.SetAnnotation(v1alpha1.AnnotationArgoCDSyncWave, v1alpha1.WaveAnnotation(w))
}

// SetWaveIfAbsent puts an object of the user's that the function renders
// for or wires (a Glance, a GlanceBackend, a hand-written workload) in a
// wave, unless it already names one: the user's choice stands.
func SetWaveIfAbsent(obj *fn.KubeObject, wave int) error {
	if _, set := obj.GetAnnotations()[v1alpha1.AnnotationArgoCDSyncWave]; set {
		return nil
	}
	return obj.SetAnnotation(v1alpha1.AnnotationArgoCDSyncWave, v1alpha1.WaveAnnotation(wave))
}
