package corpus_test

import (
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
	testenv.APIServerMain(m, func(e *envtest.Environment, c *rest.Config) { testEnv, cfg = e, c }, nil)
}
