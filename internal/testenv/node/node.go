// Package node runs a whole single-node Kubernetes cluster for a test:
// etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kubelet,
// kube-proxy and Debian's containerd and runc, inside private network,
// mount and PID namespaces, so that nothing of it reaches the host; the
// test reaches it through Dial (a socket made inside the namespace) and a
// loopback port forwarded to the API server. Images are built locally and
// imported (no registry is reachable). Stop ends every process and checks
// that the host is as it was.
package node

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/c5c3/glance-krm/internal/testenv"
)

// AssetsEnv names the folder hack/node-assets.sh prints: the Kubernetes
// binaries, CoreDNS, metrics-server and the pause program.
const AssetsEnv = "GLANCE_KRM_NODE_ASSETS"

// Assets is that folder.
type Assets struct{ Dir string }

func (a Assets) bin(name string) string { return filepath.Join(a.Dir, name) }

// FindAssets is the folder make e2e-node provides, or a skip naming it.
func FindAssets(t testing.TB) Assets {
	t.Helper()
	return Assets{Dir: testenv.Env(t, AssetsEnv, "make e2e-node")}
}

// Node is one running single-node cluster.
type Node struct {
	l          layout
	assets     Assets
	opts       Options
	cmd        *exec.Cmd
	exited     chan struct{}
	pid1       int
	pidns      string // the PID namespace's link text, "pid:[inode]"
	netns      *os.File
	cgroupRoot string
	forward    net.Listener
	registry   string         // host:port of StartRegistry's registry, once started
	closers    []func() error // what Stop closes first (the registry)
	before     hostState
	// Config reaches the API server as cluster-admin; Kubeconfig is the
	// same, as a file for kubectl and kustomize-driven tools.
	Config     *rest.Config
	Kubeconfig string
	Client     kubernetes.Interface
	started    time.Time
	// Ready is how long the node took from nothing to Ready.
	Ready time.Duration
}

// Options are what a node runs beyond its defaults; the zero value is
// the node Start brings up.
type Options struct {
	// KubeRouter is the path of a kube-router binary (FindKubeRouter): the
	// node then enforces NetworkPolicies with it, as one more daemon of
	// its init, in firewall-only mode. Test-only: see netpol.go.
	KubeRouter string
}

// Start brings a node up and registers its teardown (which fails the test
// if anything is left on the host).
func Start(t testing.TB, a Assets) *Node {
	t.Helper()
	return StartWith(t, a, Options{})
}

// StartWith is Start with options.
func StartWith(t testing.TB, a Assets, o Options) *Node {
	t.Helper()
	n, err := start(a, o)
	if n != nil {
		t.Cleanup(func() {
			if err := n.Stop(); err != nil {
				t.Errorf("node teardown: %v", err)
			}
		})
	}
	if err != nil {
		if n != nil {
			for _, d := range append([]string{"init", "containerd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubelet"}, o.daemonNames()...) {
				t.Logf("%s's log:\n%s", d, n.Logs(d, 30))
			}
		}
		t.Fatalf("starting the node: %v", err)
	}
	return n
}

func start(a Assets, o Options) (*Node, error) {
	for _, b := range []string{"kube-apiserver", "etcd", "kubelet", "kube-proxy", "kube-scheduler", "kube-controller-manager"} {
		if _, err := os.Stat(a.bin(b)); err != nil {
			return nil, fmt.Errorf("%s is not in %s: %w", b, a.Dir, err)
		}
	}
	for _, b := range []string{"containerd", "runc", "ctr", "unshare", "ip", "iptables"} {
		if _, err := exec.LookPath(b); err != nil {
			return nil, fmt.Errorf("%s is not installed (make deps-node installs Debian's): %w", b, err)
		}
	}
	if err := o.check(); err != nil {
		return nil, err
	}
	sweepCgroupRoots()
	before, err := snapshotHost()
	if err != nil {
		return nil, err
	}
	// A short path: unix socket paths are limited to 108 bytes.
	dir, err := os.MkdirTemp("", "gk-node-")
	if err != nil {
		return nil, err
	}
	id := make([]byte, 4)
	_, _ = rand.Read(id)
	n := &Node{l: layout{dir: dir}, assets: a, opts: o, before: before, started: time.Now(),
		cgroupRoot: "/" + cgroupRootPrefix + hex.EncodeToString(id)}
	if err := n.prepare(); err != nil {
		return n, err
	}
	if err := n.launch(); err != nil {
		return n, err
	}
	if err := n.connect(); err != nil {
		return n, err
	}
	if err := n.authorizeKubeRouter(); err != nil {
		return n, err
	}
	if err := n.waitReady(2 * time.Minute); err != nil {
		return n, err
	}
	n.Ready = time.Since(n.started)
	if err := n.installBase(Cache()); err != nil {
		return n, err
	}
	if err := n.WaitAvailable("kube-system", "coredns", 2*time.Minute); err != nil {
		return n, err
	}
	if err := n.waitDNS(time.Minute); err != nil {
		return n, err
	}
	return n, n.waitKubeRouter(2 * time.Minute)
}

// cgroupRootPrefix starts the name of every node's cgroup root.
const cgroupRootPrefix = "glance-krm-node-"

// Cache is where images are built once and kept: the Makefile's CACHE
// ($GLANCE_KRM_CACHE), else ~/.cache/glance-krm.
func Cache() string {
	if c := os.Getenv("GLANCE_KRM_CACHE"); c != "" {
		return c
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".cache", "glance-krm")
}

func (n *Node) prepare() error {
	l := n.l
	for _, d := range []string{"log", "etcd", "containerd", "cni", "sysctl"} {
		if err := os.MkdirAll(l.path(d), 0o755); err != nil {
			return err
		}
	}
	if err := writePKI(l.path("pki"), IP, Name); err != nil {
		return err
	}
	inside := fmt.Sprintf("https://%s:%d", IP, apiPort)
	files := map[string]string{
		"containerd.toml":               l.containerdConfig(),
		"cni/10-glance-krm.conflist":    cniConfig(),
		"kubelet.yaml":                  l.kubeletConfig(n.cgroupRoot),
		"kube-proxy.yaml":               l.kubeProxyConfig(),
		"audit-policy.yaml":             auditPolicy,
		"resolv.conf":                   "nameserver " + IP + "\n",
		"controller-manager.kubeconfig": l.kubeconfig(inside, "controller-manager"),
		"scheduler.kubeconfig":          l.kubeconfig(inside, "scheduler"),
		"kubelet.kubeconfig":            l.kubeconfig(inside, "kubelet-client"),
		"kube-proxy.kubeconfig":         l.kubeconfig(inside, "kube-proxy"),
		"sysctl/kernel.panic":           "10\n",
		"sysctl/kernel.panic_on_oops":   "1\n",
		"sysctl/vm.overcommit_memory":   "1\n",
		"sysctl/vm.panic_on_oom":        "0\n",
		"node.sh":                       l.init(n.assets, n.cgroupRoot, n.opts.daemons(l)...),
	}
	for name, content := range n.opts.files(l, inside) {
		files[name] = content
	}
	for name, content := range files {
		if err := l.write(name, content); err != nil {
			return err
		}
	}
	return makeCgroupRoot(n.cgroupRoot)
}

// launch starts the node's PID 1 in new network, mount and PID namespaces.
// --kill-child: should the test process die, unshare dies with it and
// takes the node's PID 1, and so every process of the node, along.
func (n *Node) launch() error {
	log, err := os.Create(n.l.path("log", "init.log"))
	if err != nil {
		return err
	}
	cmd := exec.Command("unshare", "--fork", "--pid", "--mount-proc", "--net", "--mount", "--propagation", "private",
		"--kill-child=SIGKILL", "--", "/bin/sh", n.l.path("node.sh"))
	cmd.Stdout, cmd.Stderr = log, log
	cmd.Env = append(os.Environ(), "PATH="+n.assets.Dir+":"+os.Getenv("PATH"))
	// Pdeathsig fires when the OS thread that started the process ends, so
	// one locked thread starts unshare and waits for it: should the test
	// process die, unshare is killed, and with it the whole node.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	started := make(chan error, 1)
	n.exited = make(chan struct{})
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		err := cmd.Start()
		started <- err
		if err == nil {
			_ = cmd.Wait()
		}
		_ = log.Close()
		close(n.exited)
	}()
	if err := <-started; err != nil {
		return err
	}
	n.cmd = cmd
	// PID 1 of the new namespace is unshare's only child.
	deadline := time.Now().Add(10 * time.Second)
	err = n.waitInit(deadline, func() bool {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", cmd.Process.Pid, cmd.Process.Pid))
		if f := strings.Fields(string(b)); len(f) > 0 {
			n.pid1, _ = strconv.Atoi(f[0])
		}
		return n.pid1 != 0
	}, func() error { return errors.New("unshare started no child in 10 s") })
	if err != nil {
		return err
	}
	// Its network namespace, once the init has made it its own.
	err = n.waitInit(deadline, func() bool {
		_, err := os.Stat(n.l.path("started"))
		return err == nil
	}, func() error {
		return fmt.Errorf("the node's init did not start its daemons in 10 s: %s", n.Logs("init", 20))
	})
	if err != nil {
		return err
	}
	ns, err := os.Open(fmt.Sprintf("/proc/%d/ns/net", n.pid1))
	if err != nil {
		return err
	}
	n.netns = ns
	n.pidns, err = os.Readlink(fmt.Sprintf("/proc/%d/ns/pid", n.pid1))
	return err
}

// waitInit polls done until it holds, the node's init exits (an error
// with its log) or the deadline passes (late's error).
func (n *Node) waitInit(deadline time.Time, done func() bool, late func() error) error {
	for !done() {
		select {
		case <-n.exited:
			return fmt.Errorf("the node's init exited: %s", n.Logs("init", 20))
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return late()
		}
	}
	return nil
}

// inNamespace are the host PIDs of the processes still in the node's PID
// namespace.
func (n *Node) inNamespace() []string {
	var out []string
	links, _ := filepath.Glob("/proc/[0-9]*/ns/pid")
	for _, l := range links {
		if v, err := os.Readlink(l); err == nil && v == n.pidns {
			out = append(out, filepath.Base(filepath.Dir(filepath.Dir(l))))
		}
	}
	return out
}

// connect waits for the API server and makes the clients: Config dials
// inside the namespace; Kubeconfig points at a loopback port of the host
// that is forwarded there.
func (n *Node) connect() error {
	cfg := &rest.Config{
		Host: fmt.Sprintf("https://%s:%d", IP, apiPort),
		TLSClientConfig: rest.TLSClientConfig{
			CAFile: n.l.pki("ca.crt"), CertFile: n.l.pki("admin.crt"), KeyFile: n.l.pki("admin.key"),
		},
		Dial: n.DialContext, QPS: 100, Burst: 200,
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(90 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		body, err := client.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		cancel()
		if err == nil && string(body) == "ok" {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the API server is not ready after 90 s: %w\n%s", err, n.Logs("kube-apiserver", 20))
		}
		select {
		case <-n.exited:
			return fmt.Errorf("the node's init exited: %s", n.Logs("init", 20))
		case <-time.After(200 * time.Millisecond):
		}
	}
	n.Config, n.Client = cfg, client
	fwd, err := n.Forward(fmt.Sprintf("%s:%d", IP, apiPort))
	if err != nil {
		return err
	}
	n.forward = fwd
	n.Kubeconfig = n.l.path("admin.kubeconfig")
	return n.l.write("admin.kubeconfig", n.l.kubeconfig("https://"+fwd.Addr().String(), "admin"))
}

func (n *Node) waitReady(limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		node, err := n.Client.CoreV1().Nodes().Get(context.Background(), Name, metav1.GetOptions{})
		if err == nil {
			for _, c := range node.Status.Conditions {
				if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
					return nil
				}
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("node %s is not Ready after %s: %w\n%s", Name, limit, err, n.Logs("kubelet", 30))
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// Stop kills the node's PID 1 (the kernel then kills every process of its
// PID namespace, and the mount and network namespaces go with the last of
// them), removes the cgroups the kubelet made and the node's folder, and
// reports what, if anything, is left on the host.
func (n *Node) Stop() error {
	if n.forward != nil {
		_ = n.forward.Close()
	}
	for _, c := range n.closers {
		_ = c()
	}
	if n.cmd != nil {
		if n.pid1 != 0 {
			_ = syscall.Kill(n.pid1, syscall.SIGKILL)
		}
		_ = n.cmd.Process.Kill()
		select {
		case <-n.exited:
		case <-time.After(30 * time.Second):
			return errors.New("unshare did not exit 30 s after its namespace was killed")
		}
		// The kernel kills the namespace's other processes after its PID 1,
		// not all at once.
		for deadline := time.Now().Add(30 * time.Second); n.pidns != ""; time.Sleep(50 * time.Millisecond) {
			left := n.inNamespace()
			if len(left) == 0 {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("processes %v of the node outlived it by 30 s", left)
			}
		}
	}
	if n.netns != nil {
		_ = n.netns.Close()
	}
	var errs []error
	if err := removeCgroupRoot(n.cgroupRoot, 30*time.Second); err != nil {
		errs = append(errs, err)
	}
	if os.Getenv("GLANCE_KRM_NODE_KEEP") != "" {
		fmt.Fprintf(os.Stderr, "node: keeping %s (GLANCE_KRM_NODE_KEEP)\n", n.l.dir)
	} else if err := os.RemoveAll(n.l.dir); err != nil {
		errs = append(errs, err)
	}
	after, err := snapshotHost()
	if err != nil {
		errs = append(errs, err)
	} else if diff := n.before.diff(after); diff != "" {
		errs = append(errs, fmt.Errorf("the host changed: %s", diff))
	}
	return errors.Join(errs...)
}
