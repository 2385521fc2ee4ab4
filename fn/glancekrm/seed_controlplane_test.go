package glancekrm

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kptdev/krm-functions-sdk/go/fn"
)

// TestSeedControlPlanes: the seed system's own ControlPlanes that declare
// services.glance (krm/testdata/seed/cr, hack/seed-crs.py) project and
// render without an error; the Glance cases of its c5c3 invalid-cr suite
// are refused.
func TestSeedControlPlanes(t *testing.T) {
	for dir, wantErr := range map[string]bool{"controlplane-valid": false, "controlplane-invalid": true} {
		files, err := filepath.Glob(filepath.Join("../../krm/testdata/seed/cr", dir, "*.yaml"))
		if err != nil || len(files) < 4 {
			t.Fatalf("%s: %d files, %v", dir, len(files), err)
		}
		for _, f := range files {
			t.Run(dir+"/"+strings.TrimSuffix(filepath.Base(f), ".yaml"), func(t *testing.T) {
				raw, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				out, failed := runFn(t, resourceList(t, raw))
				rl, err := fn.ParseResourceList(out)
				if err != nil {
					t.Fatal(err)
				}
				if failed != wantErr {
					t.Errorf("failed = %v, want %v:\n%s", failed, wantErr, rl.Results)
				}
				if !wantErr && !strings.Contains(rl.Results.String(), "projects Glance") {
					t.Errorf("no projection reported:\n%s", rl.Results)
				}
			})
		}
	}
}
