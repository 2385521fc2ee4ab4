package workload

import (
	"strings"
	"testing"

	"github.com/kptdev/krm-functions-sdk/go/fn"

	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

// TestAKindWithoutAWaveIsAnError: the generator refuses to emit an
// object the wave table does not place, rather than let it fall into
// the first wave.
func TestAKindWithoutAWaveIsAnError(t *testing.T) {
	for _, y := range []string{
		"apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: x}\n",
		"apiVersion: batch/v1\nkind: Job\nmetadata: {name: x, labels: {app.kubernetes.io/component: something-new}}\n",
	} {
		o, err := fn.ParseKubeObject([]byte(y))
		if err != nil {
			t.Fatal(err)
		}
		var gen generated
		gen.add(o, nil)
		if gen.err == nil || !strings.Contains(gen.err.Error(), "no sync wave") {
			t.Errorf("%s %s: err %v, want no sync wave", o.GetKind(), o.GetName(), gen.err)
		}
	}
}

// TestWaveOfEveryKind: the wave of each kind the generator emits, as
// docs/workload.md lists them: what pods need first, the Deployments,
// then what needs the new pods or the old ones gone.
func TestWaveOfEveryKind(t *testing.T) {
	for _, c := range []struct {
		kind, component string
		want            int
	}{
		{"ConfigMap", "", v1alpha1.WavePrepare}, // the rendered Secret and ConfigMap: history.go, wave 0 too
		{"Service", "", v1alpha1.WavePrepare}, {"NetworkPolicy", "", v1alpha1.WavePrepare},
		{"ServiceAccount", "", v1alpha1.WavePrepare}, {"Role", "", v1alpha1.WavePrepare}, {"RoleBinding", "", v1alpha1.WavePrepare},
		{"Job", componentDBSync, v1alpha1.WavePrepare},
		{"Deployment", "", v1alpha1.WaveWorkload},
		{"Job", componentDBContract, v1alpha1.WaveAfter}, {"Job", componentStoreDrain, v1alpha1.WaveAfter},
		{"HorizontalPodAutoscaler", "", v1alpha1.WaveAfter}, {"PodDisruptionBudget", "", v1alpha1.WaveAfter},
		{"HTTPRoute", "", v1alpha1.WaveAfter}, {"CronJob", "", v1alpha1.WaveAfter},
	} {
		o := fn.NewEmptyKubeObject()
		if err := o.SetKind(c.kind); err != nil {
			t.Fatal(err)
		}
		if err := o.SetName("x"); err != nil {
			t.Fatal(err)
		}
		if c.component != "" {
			if err := o.SetLabel(labelAppComponent, c.component); err != nil {
				t.Fatal(err)
			}
		}
		var gen generated
		gen.add(o, nil)
		if gen.err != nil {
			t.Fatalf("%s %s: %v", c.kind, c.component, gen.err)
		}
		if got := o.GetAnnotation(v1alpha1.AnnotationArgoCDSyncWave); got != v1alpha1.WaveAnnotation(c.want) {
			t.Errorf("%s %s: wave %q, want %d", c.kind, c.component, got, c.want)
		}
	}
}
