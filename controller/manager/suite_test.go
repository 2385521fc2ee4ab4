package manager_test

import (
	"bytes"
	"context"
	"fmt"
	"sync"

	"os"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap/zapcore"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/c5c3/glance-krm/controller/manager"
	"github.com/c5c3/glance-krm/internal/testenv"
)

// The suite runs the assembled controller against a real kube-apiserver
// and etcd (envtest) and counts every status write it makes.
var (
	testEnv      *envtest.Environment
	cfg          *rest.Config
	k8s          client.Client // the tests' own client, not the controller's
	statusWrites atomic.Int64
	controller   ctrl.Manager // the controller under test, for its cache
	logs         syncBuffer
)

// syncBuffer is a bytes.Buffer the controller's goroutines can share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestMain(m *testing.M) {
	if !testenv.MainNeeds("KUBEBUILDER_ASSETS", "make unit") {
		os.Exit(0)
	}
	ctrl.SetLogger(zap.New(zap.WriteTo(&logs), zap.UseDevMode(true), zap.Level(zapcore.Level(-10))))
	var err error
	if testEnv, cfg, err = testenv.StartAPIServer(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if k8s, err = client.New(cfg, client.Options{Scheme: manager.Scheme()}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	ctx, cancel := context.WithCancel(context.Background())
	mgr, err := manager.New(ctx, cfg, manager.Options{
		BackstopPeriod: time.Hour,
		MetricsAddr:    "0", ProbeAddr: "0", RegistryNamespace: "c5c3-clusters",
		NewClient: countingClient,
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	controller = mgr
	done := make(chan error)
	go func() { done <- mgr.Start(ctx) }()
	code := m.Run()
	cancel()
	if err := <-done; err != nil {
		fmt.Fprintln(os.Stderr, "manager:", err)
	}
	_ = testEnv.Stop()
	os.Exit(code)
}

// countingClient is the manager's own client, wrapped to count status
// writes: the controller must not write an unchanged status.
func countingClient(config *rest.Config, options client.Options) (client.Client, error) {
	c, err := client.NewWithWatch(config, options)
	if err != nil {
		return nil, err
	}
	return interceptor.NewClient(c, interceptor.Funcs{
		SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			statusWrites.Add(1)
			return c.SubResource(sub).Update(ctx, obj, opts...)
		},
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			statusWrites.Add(1)
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		},
	}), nil
}

// namespace makes a fresh namespace for one test.
func namespace(t *testing.T) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "t-"}}
	if err := k8s.Create(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

// eventually polls until check passes, for at most a minute.
func eventually(t *testing.T, what string, check func() error) {
	t.Helper()
	testenv.Eventually(t, time.Minute, 100*time.Millisecond, what, check)
}
