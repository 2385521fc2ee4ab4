package main

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/c5c3/glance-krm/internal/testenv"
)

// TestFunctionLinksNoClusterClient holds the boundary depguard checks for
// direct imports (.golangci.yml) for the whole import graph: nothing the
// function binary links may talk to a cluster or be controller code.
func TestFunctionLinksNoClusterClient(t *testing.T) {
	testenv.External(t, "go list")
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		for _, banned := range []string{"k8s.io/client-go", "sigs.k8s.io/controller-runtime", "github.com/c5c3/glance-krm/controller"} {
			if pkg == banned || strings.HasPrefix(pkg, banned+"/") {
				t.Errorf("the function binary links %s", pkg)
			}
		}
	}
}
