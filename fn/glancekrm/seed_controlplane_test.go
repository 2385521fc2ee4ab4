package glancekrm

import (
	"path/filepath"
	"strings"
	"testing"
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
				rl, failed := runFile(t, f)
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
