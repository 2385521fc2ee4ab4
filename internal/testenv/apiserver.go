package testenv

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/c5c3/glance-krm/krm/crds"
)

// RepoRoot is the repository's top directory.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// StartAPIServer starts a real kube-apiserver and etcd (envtest, with the
// binaries KUBEBUILDER_ASSETS names: `make test` resolves them with
// hack/envtest-assets.sh) with glance-krm's CRDs, as krm/crds embeds
// them, and the CRD files given installed.
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
	crds, err := embeddedCRDs()
	if err != nil {
		return nil, nil, err
	}
	env := &envtest.Environment{CRDs: crds, ErrorIfCRDPathMissing: true}
	adjust(env)
	cfg, err := env.Start()
	return env, cfg, err
}

// APIServerMain is the TestMain of a suite on a real API server: without
// KUBEBUILDER_ASSETS outside make it skips the suite (MainNeeds); else it
// runs prepare (the extra CRDs a suite installs; an error fails the
// suite), starts the API server with glance-krm's CRDs and prepare's
// adjustments, hands it and its config to use, runs the tests and stops it.
func APIServerMain(m *testing.M, use func(*envtest.Environment, *rest.Config), prepare func() (func(*envtest.Environment), error)) {
	if !MainNeeds("KUBEBUILDER_ASSETS", "make unit") {
		os.Exit(0)
	}
	adjust := func(*envtest.Environment) {}
	if prepare != nil {
		a, err := prepare()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		adjust = a
	}
	env, cfg, err := StartAPIServerWith(adjust)
	if err != nil {
		// A CRD whose CEL rules exceed the API server's cost budget is
		// refused here, which fails the suite.
		fmt.Fprintln(os.Stderr, "starting kube-apiserver and etcd with the CRDs:", err)
		os.Exit(1)
	}
	use(env, cfg)
	code := m.Run()
	if err := env.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "stopping the control plane:", err)
	}
	os.Exit(code)
}

// embeddedCRDs are glance-krm's CRDs as krm/crds embeds them: what the
// function validates against is what the API server serves.
func embeddedCRDs() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	files, err := fs.Glob(crds.JSON, "json/*.json")
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, errors.New("krm/crds embeds no CRD")
	}
	var out []*apiextensionsv1.CustomResourceDefinition
	for _, f := range files {
		b, err := crds.JSON.ReadFile(f)
		if err != nil {
			return nil, err
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := json.Unmarshal(b, crd); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		out = append(out, crd)
	}
	return out, nil
}

// GatewayAPICRD is the HTTPRoute CRD of the Gateway API module go.mod
// requires (sigs.k8s.io/gateway-api, its standard channel).
func GatewayAPICRD() (string, error) {
	return moduleFile("sigs.k8s.io/gateway-api", "config", "crd", "standard", "gateway.networking.k8s.io_httproutes.yaml")
}

// VPACRD is the path of the VerticalPodAutoscaler CRDs the Kubernetes
// autoscaler ships (deploy/vpa-v1-crd-gen.yaml), from the module whose Go
// types the function generates the VPA with.
func VPACRD() (string, error) {
	return VPAManifest("vpa-v1-crd-gen.yaml")
}

// VPAManifest is a file of that module's deploy/: its CRDs, its RBAC
// (vpa-rbac.yaml), the recommender's Deployment
// (recommender-deployment.yaml).
func VPAManifest(name string) (string, error) {
	return moduleFile("k8s.io/autoscaler/vertical-pod-autoscaler", "deploy", name)
}

// moduleFile is a file of a module of go.mod, in the module cache.
func moduleFile(module string, elem ...string) (string, error) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", module).Output()
	if err != nil {
		return "", err
	}
	return filepath.Join(append([]string{strings.TrimSpace(string(out))}, elem...)...), nil
}
