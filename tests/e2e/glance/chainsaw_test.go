//go:build e2e

package glance_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/c5c3/glance-krm/internal/testenv"
)

// The contract's four e2e suites, run with chainsaw against a real
// kube-apiserver + etcd (envtest) while glance-krm-controller runs as a
// process with only the RBAC its markers generate. There is no kubelet and
// no kube-controller-manager: nothing runs pods, and deleted namespaces
// never finish, so each suite gets a fixed namespace and skips deletion.
var suites = []string{"s3-multistore", "default-backend-switch", "deletion-cleanup", "invalid-glancebackend-cr"}

func TestChainsawSuites(t *testing.T) {
	testenv.APIServer(t)
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	env, cfg, err := testenv.StartAPIServer()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	admin, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	// The controller's identity: bound to the generated ClusterRole and
	// the leader-election Role, and nothing else.
	testenv.StartController(t, env, admin, testenv.ControllerOptions{})

	// chainsaw and its scripts: an admin kubeconfig, and kubectl and
	// kustomize on PATH.
	adminKubeconfig := testenv.Kubeconfig(t, env, envtest.User{Name: "chainsaw", Groups: []string{"system:masters"}})
	bin := t.TempDir()
	for name, target := range map[string]string{
		"kubectl":   filepath.Join(assets, "kubectl"),
		"kustomize": testenv.Kustomize(t),
	} {
		if err := os.Symlink(target, filepath.Join(bin, name)); err != nil {
			t.Fatal(err)
		}
	}
	for _, suite := range suites {
		ok := check(t, suite, func(t *testing.T) {
			mustCreate(t, admin, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: suite}})
			cmd := exec.CommandContext(ctx, filepath.Join(assets, "chainsaw"), "test", "--test-dir", suite,
				"--namespace", suite, "--skip-delete", "--parallel", "1", "--no-color")
			cmd.Env = append(os.Environ(), "KUBECONFIG="+adminKubeconfig, "PATH="+bin+":"+os.Getenv("PATH"))
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Errorf("chainsaw %s: %v\n%s", suite, err, out)
				return
			}
			t.Logf("chainsaw %s passed:\n%s", suite, tailLines(string(out), 8))
		})
		_ = ok
	}
}

func mustCreate(t *testing.T, c client.Client, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		if err := c.Create(context.Background(), o); err != nil {
			t.Fatalf("creating %s: %v", o.GetName(), err)
		}
	}
}

func tailLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
