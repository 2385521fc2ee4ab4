package testenv

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// RepoRoot is the repository's top directory.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// StartAPIServer starts a real kube-apiserver and etcd (envtest, with the
// binaries KUBEBUILDER_ASSETS names: `make test` resolves them with
// hack/envtest-assets.sh) with glance-krm's CRDs and the given others
// installed.
func StartAPIServer(extraCRDPaths ...string) (*envtest.Environment, *rest.Config, error) {
	return StartAPIServerWith(func(env *envtest.Environment) {
		env.CRDDirectoryPaths = append(env.CRDDirectoryPaths, extraCRDPaths...)
	})
}

// StartAPIServerWith is StartAPIServer with the environment adjusted
// before it starts (API server flags, more CRDs).
func StartAPIServerWith(adjust func(*envtest.Environment)) (*envtest.Environment, *rest.Config, error) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		return nil, nil, errors.New("KUBEBUILDER_ASSETS is not set: run the tests through `make test`, which provides kube-apiserver and etcd")
	}
	env := &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join(RepoRoot(), "krm", "crds")},
		ErrorIfCRDPathMissing: true,
	}
	adjust(env)
	cfg, err := env.Start()
	return env, cfg, err
}

// GatewayAPICRD is the HTTPRoute CRD of the Gateway API module go.mod
// requires (sigs.k8s.io/gateway-api, its standard channel).
func GatewayAPICRD() (string, error) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/gateway-api").Output()
	if err != nil {
		return "", err
	}
	return filepath.Join(strings.TrimSpace(string(out)), "config", "crd", "standard", "gateway.networking.k8s.io_httproutes.yaml"), nil
}
