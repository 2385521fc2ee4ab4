package workload

import (
	"strings"
	"testing"

	"github.com/kptdev/krm-functions-sdk/go/fn"
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
