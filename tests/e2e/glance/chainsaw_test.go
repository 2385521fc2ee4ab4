//go:build e2e

package glance_test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// The contract's four e2e suites, run with chainsaw against a real
// kube-apiserver + etcd (envtest) while glance-krm-controller runs as a
// process with only the RBAC its markers generate. There is no kubelet and
// no kube-controller-manager: nothing runs pods, and deleted namespaces
// never finish, so each suite gets a fixed namespace and skips deletion.
var suites = []string{"s3-multistore", "default-backend-switch", "deletion-cleanup", "invalid-glancebackend-cr"}

func TestChainsawSuites(t *testing.T) {
	assets := mustEnv(t, "KUBEBUILDER_ASSETS", "run through `make test`")
	env := &envtest.Environment{CRDDirectoryPaths: []string{"../../../krm/crds"}, ErrorIfCRDPathMissing: true}
	cfg, err := env.Start()
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
	controllerKubeconfig := kubeconfigFor(t, env, envtest.User{Name: "glance-krm-controller"})
	mustCreate(t, admin, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "glance-krm-system"}})
	for _, obj := range readManifests(t, "../../../controller/config/rbac/role.yaml") {
		mustCreate(t, admin, obj)
	}
	subject := []rbacv1.Subject{{Kind: rbacv1.UserKind, Name: "glance-krm-controller", APIGroup: rbacv1.GroupName}}
	mustCreate(t, admin,
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "glance-krm-controller"}, Subjects: subject,
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "glance-krm-controller"}},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "glance-krm-controller", Namespace: "glance-krm-system"}, Subjects: subject,
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "glance-krm-controller"}})
	stop := startController(t, controllerKubeconfig)
	t.Cleanup(stop)

	// chainsaw and its scripts: an admin kubeconfig, and kubectl and
	// kustomize on PATH.
	adminKubeconfig := kubeconfigFor(t, env, envtest.User{Name: "chainsaw", Groups: []string{"system:masters"}})
	bin := t.TempDir()
	for name, target := range map[string]string{
		"kubectl":   filepath.Join(assets, "kubectl"),
		"kustomize": mustEnv(t, "KUSTOMIZE_BIN", "run through `make test`"),
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

func kubeconfigFor(t *testing.T, env *envtest.Environment, u envtest.User) string {
	t.Helper()
	user, err := env.AddUser(u, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := user.KubeConfig()
	if err != nil {
		t.Fatal(err)
	}
	return write(t, filepath.Join(t.TempDir(), "kubeconfig"), string(b))
}

func mustCreate(t *testing.T, c client.Client, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		if err := c.Create(context.Background(), o); err != nil {
			t.Fatalf("creating %s: %v", o.GetName(), err)
		}
	}
}

func readManifests(t *testing.T, file string) []client.Object {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(raw), 4096)
	var out []client.Object
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); err != nil {
			return out
		}
		if len(u.Object) > 0 {
			out = append(out, u)
		}
	}
}

// startController runs bin/glance-krm-controller and waits for /readyz.
func startController(t *testing.T, kubeconfig string) func() {
	t.Helper()
	bin := mustEnv(t, "GLANCE_KRM_CONTROLLER", "run through `make test`, which builds the controller")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	probes := l.Addr().String()
	l.Close()
	log := filepath.Join(os.TempDir(), fmt.Sprintf("glance-krm-controller-%d.log", time.Now().UnixNano()))
	f, err := os.Create(log)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--kubeconfig", kubeconfig, "--metrics-bind-address", "0",
		"--health-probe-bind-address", probes, "--leader-elect", "--leader-election-namespace", "glance-krm-system")
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	stop := func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
		}
		f.Close()
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get("http://" + probes + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				t.Logf("glance-krm-controller ready (log: %s)", log)
				return stop
			}
		}
		select {
		case <-exited:
			b, _ := os.ReadFile(log)
			t.Fatalf("glance-krm-controller exited:\n%s", b)
		case <-time.After(300 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			stop()
			b, _ := os.ReadFile(log)
			t.Fatalf("glance-krm-controller not ready in 60 s:\n%s", b)
		}
	}
}

func tailLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
