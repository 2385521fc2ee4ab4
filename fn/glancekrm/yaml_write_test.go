package glancekrm

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kptdev/krm-functions-sdk/go/fn"
)

// TestWriterMatchesTheSDK: Run's writer produces exactly the SDK's bytes,
// on every golden case, generated inputs and the fuzz seeds.
func TestWriterMatchesTheSDK(t *testing.T) {
	inputs := allInputs(t)
	seeds, _ := filepath.Glob("testdata/fuzz/*/*")
	for _, s := range seeds {
		b, _ := os.ReadFile(s)
		inputs[s] = b
	}
	corpus, _ := filepath.Glob("../../krm/testdata/corpus/*.yaml")
	for _, s := range corpus {
		b, _ := os.ReadFile(s)
		inputs[s] = resourceList(t, b)
	}
	for name, in := range inputs {
		t.Run(name, func(t *testing.T) {
			want, wantErr := fn.Run(fn.ResourceListProcessorFunc(Process), in)
			got, _, gotErr := Transform(in)
			if (wantErr == nil) != (gotErr == nil) {
				t.Fatalf("errors differ: SDK %v, Run %v", wantErr, gotErr)
			}
			if diff := cmp.Diff(string(want), string(got)); diff != "" {
				t.Errorf("Run writes differently from the SDK (-sdk +run):\n%s", diff)
			}
		})
	}
}
