package examples_test

import (
	"errors"
	"os/exec"
	"strings"
	"testing"
)

// validateAgrees: `glance-krm-fn validate` on a kustomization gives the
// verdict its build gave (buildErr, stderr): 0 when it passed, 1 when the
// function failed it, 2 when kustomize did.
func validateAgrees(t *testing.T, dir string, buildErr error, stderr string) {
	t.Helper()
	want := 0
	switch {
	case buildErr == nil:
	case strings.Contains(stderr, "glance-krm: failed with the errors above"):
		want = 1
	default:
		want = 2
	}
	out, err := exec.Command(fnBinary, "validate", dir).CombinedOutput()
	got := 0
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		got = exit.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	if got != want {
		t.Errorf("validate exited %d, the build's verdict is %d:\n%s\nbuild:\n%s", got, want, out, stderr)
	}
}
