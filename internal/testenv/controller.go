package testenv

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// ControllerNamespace is where the controller's leader-election Lease and
// Role live (controller/config).
const ControllerNamespace = "glance-krm-system"

// Controller is bin/glance-krm-controller running as a process, under its
// own user bound to the RBAC its markers generate
// (controller/config/rbac/role.yaml) and nothing else, with leader
// election on, as it runs in a cluster.
type Controller struct {
	Metrics string // host:port of /metrics, "" when not asked for
	Log     string // its stdout and stderr

	cmd    *exec.Cmd
	exited chan struct{}
	once   sync.Once
	file   *os.File
}

// ControllerOptions adjust StartController.
type ControllerOptions struct {
	User    string   // the identity the RBAC is bound to; default glance-krm-controller
	Metrics bool     // serve /metrics on a free port
	Args    []string // more flags
}

// StartController binds the RBAC, starts the process and waits for its
// /readyz; it is stopped when the test ends (or by Stop).
func StartController(t testing.TB, env *envtest.Environment, admin client.Client, o ControllerOptions) *Controller {
	t.Helper()
	bin := Env(t, "GLANCE_KRM_CONTROLLER", "make build")
	if o.User == "" {
		o.User = "glance-krm-controller"
	}
	kubeconfig := Kubeconfig(t, env, envtest.User{Name: o.User})
	BindControllerRBAC(t, admin, o.User)

	c := &Controller{Log: filepath.Join(t.TempDir(), "controller.log"), exited: make(chan struct{})}
	metrics := "0"
	if o.Metrics {
		c.Metrics = HostPort(t)
		metrics = c.Metrics
	}
	probes := HostPort(t)
	f, err := os.Create(c.Log)
	if err != nil {
		t.Fatal(err)
	}
	c.file = f
	c.cmd = exec.Command(bin, append([]string{"--kubeconfig", kubeconfig, "--metrics-bind-address", metrics,
		"--health-probe-bind-address", probes, "--leader-elect", "--leader-election-namespace", ControllerNamespace}, o.Args...)...)
	c.cmd.Stdout, c.cmd.Stderr = f, f
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = c.cmd.Wait(); close(c.exited) }()
	t.Cleanup(c.Stop)

	deadline := time.Now().Add(time.Minute)
	for {
		if ready(probes) {
			t.Logf("glance-krm-controller ready (log: %s)", c.Log)
			return c
		}
		select {
		case <-c.exited:
			t.Fatalf("glance-krm-controller exited:\n%s", c.LogText())
		case <-time.After(300 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			c.Stop()
			t.Fatalf("glance-krm-controller not ready in a minute:\n%s", c.LogText())
		}
	}
}

func ready(probes string) bool {
	resp, err := http.Get("http://" + probes + "/readyz")
	if err != nil {
		return false
	}
	_ = resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// Stop ends the process as a kubelet would (SIGTERM, then SIGKILL after
// 15 s); it may be called more than once.
func (c *Controller) Stop() {
	c.once.Do(func() {
		_ = c.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-c.exited:
		case <-time.After(15 * time.Second):
			_ = c.cmd.Process.Kill()
			<-c.exited
		}
		_ = c.file.Close()
	})
}

// Pid is the process's id (for /proc).
func (c *Controller) Pid() int { return c.cmd.Process.Pid }

// LogText is what the process wrote so far.
func (c *Controller) LogText() string {
	b, _ := os.ReadFile(c.Log)
	return string(b)
}

// Kubeconfig adds a user to the API server and writes its kubeconfig.
func Kubeconfig(t testing.TB, env *envtest.Environment, u envtest.User) string {
	t.Helper()
	user, err := env.AddUser(u, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := user.KubeConfig()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// BindControllerRBAC creates the controller's namespace, the generated
// ClusterRole and Role, and binds them to user.
func BindControllerRBAC(t testing.TB, admin client.Client, user string) {
	t.Helper()
	objs := []client.Object{&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ControllerNamespace}}}
	objs = append(objs, Manifests(t, filepath.Join(RepoRoot(), "controller", "config", "rbac", "role.yaml"))...)
	subject := []rbacv1.Subject{{Kind: rbacv1.UserKind, Name: user, APIGroup: rbacv1.GroupName}}
	objs = append(objs,
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: user}, Subjects: subject,
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "glance-krm-controller"}},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: user, Namespace: ControllerNamespace}, Subjects: subject,
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "glance-krm-controller"}})
	for _, o := range objs {
		if err := admin.Create(context.Background(), o); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatalf("creating %s %s: %v", o.GetObjectKind().GroupVersionKind().Kind, o.GetName(), err)
		}
	}
}

// Manifests reads every object of a multi-document YAML file.
func Manifests(t testing.TB, file string) []client.Object {
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
			if !errors.Is(err, io.EOF) {
				t.Fatalf("%s: %v", file, err)
			}
			return out
		}
		if len(u.Object) > 0 {
			out = append(out, u)
		}
	}
}

// HostPort is a free 127.0.0.1 address.
func HostPort(t testing.TB) string {
	t.Helper()
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(FreePort(t)))
}
