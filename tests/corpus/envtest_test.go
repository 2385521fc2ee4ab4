package corpus_test

import (
	"fmt"
	"os"
	"testing"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/c5c3/glance-krm/internal/testenv"
)

// One real kube-apiserver and etcd (envtest) with the generated CRDs for
// the whole package; KUBEBUILDER_ASSETS names the binaries (`make test`
// resolves them with hack/envtest-assets.sh).
var (
	testEnv *envtest.Environment
	cfg     *rest.Config
)

func TestMain(m *testing.M) {
	if !testenv.MainNeeds("KUBEBUILDER_ASSETS", "make unit") {
		os.Exit(0)
	}
	var err error
	if testEnv, cfg, err = testenv.StartAPIServer(); err != nil {
		// A CRD whose CEL rules exceed the API server's cost budget is
		// refused here, which fails the suite.
		fmt.Fprintln(os.Stderr, "starting kube-apiserver and etcd with the CRDs:", err)
		os.Exit(1)
	}
	code := m.Run()
	if err := testEnv.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "stopping the control plane:", err)
	}
	os.Exit(code)
}
