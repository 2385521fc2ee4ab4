package node

// NetworkPolicy enforcement, for a node started with Options.KubeRouter.
// The node's bridge CNI enforces none; kube-router in firewall-only mode
// turns NetworkPolicies into iptables rules and ipsets. Its v2.1.0, the
// only version the Go module proxy serves, has known security flaws: it
// is for tests only and runs only as a daemon of the test node's init,
// inside the node's namespaces, whose rules and ipsets go with them.

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/c5c3/glance-krm/internal/testenv"
)

// GitOpsAssetsEnv names the folder hack/gitops-assets.sh prints, which
// holds the kube-router binary among the GitOps engines.
const GitOpsAssetsEnv = "GLANCE_KRM_GITOPS_ASSETS"

// FindKubeRouter is the kube-router binary of that folder, or a skip (a
// failure under make) naming it.
func FindKubeRouter(t testing.TB) string {
	t.Helper()
	return filepath.Join(testenv.Env(t, GitOpsAssetsEnv, "make e2e-gitops"), "kube-router")
}

// kubeRouterUser is kube-router's identity: its own, not the admin's, so
// that it holds only the read access it needs and the audit log can
// leave it out like the other node components.
const kubeRouterUser = "glance-krm-node:kube-router"

// check fails early on what kube-router would only log at each restart.
func (o Options) check() error {
	if o.KubeRouter == "" {
		return nil
	}
	st, err := os.Stat(o.KubeRouter)
	if err != nil {
		return fmt.Errorf("kube-router: %w", err)
	}
	if st.Mode()&0o111 == 0 {
		return fmt.Errorf("kube-router: %s is not executable", o.KubeRouter)
	}
	// kube-router runs these from PATH; nsenter is how the start sees its
	// rules.
	for _, b := range []string{"ipset", "iptables-save", "iptables-restore", "nsenter"} {
		if _, err := exec.LookPath(b); err != nil {
			return fmt.Errorf("%s is not installed, though kube-router needs it (make deps-node installs Debian's ipset and iptables): %w", b, err)
		}
	}
	return nil
}

// daemonNames are the logs a failed start shows besides the usual ones.
func (o Options) daemonNames() []string {
	if o.KubeRouter == "" {
		return nil
	}
	return []string{"kube-router"}
}

// daemons are what the node's init runs for the options. kube-router
// starts with the others and, until the API server has its Node object
// and RBAC, exits and is restarted, as the controller manager is.
func (o Options) daemons(l layout) []daemon {
	if o.KubeRouter == "" {
		return nil
	}
	return []daemon{{"kube-router", []string{o.KubeRouter,
		// Pods are routed by the bridge and Services by kube-proxy: only
		// the firewall is kube-router's.
		"--run-firewall=true", "--run-router=false", "--run-service-proxy=false",
		"--kubeconfig=" + l.path("kube-router.kubeconfig"), "--hostname-override=" + Name,
		// Its default, 10.96.0.0/12, is not the node's range.
		"--service-cluster-ip-range=" + serviceCIDR,
		// Nothing asks its health: no listening port.
		"--health-port=0",
	}}}
}

// files are the node's files the options add.
func (o Options) files(l layout, server string) map[string]string {
	if o.KubeRouter == "" {
		return nil
	}
	return map[string]string{"kube-router.kubeconfig": l.kubeconfig(server, "kube-router")}
}

// authorizeKubeRouter grants kube-router its reads; it needs the API
// server up, so it comes after the daemons have started.
func (n *Node) authorizeKubeRouter() error {
	if n.opts.KubeRouter == "" {
		return nil
	}
	return n.Apply(kubeRouterRBAC)
}

// waitKubeRouter waits for kube-router's first sync, after which a new
// NetworkPolicy is enforced within its next sync (it syncs on every
// change of a policy, pod or namespace): the jump from FORWARD to its
// chain exists only once it has run.
func (n *Node) waitKubeRouter(limit time.Duration) error {
	if n.opts.KubeRouter == "" {
		return nil
	}
	deadline := time.Now().Add(limit)
	for {
		out, err := n.InNetwork("iptables", "-t", "filter", "-S", "FORWARD")
		if err == nil && strings.Contains(string(out), "-j KUBE-ROUTER-FORWARD") {
			return nil
		}
		if err == nil {
			err = errors.New("no jump to KUBE-ROUTER-FORWARD")
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("kube-router enforces nothing after %s (%w)\n%s", limit, err, n.Logs("kube-router", 30))
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// kubeRouterRBAC is what its firewall reads. v2.1.0 also starts informers
// on Services, Endpoints and EndpointSlices in firewall-only mode and
// waits for all of them to sync, so it reads those too; it writes nothing.
const kubeRouterRBAC = `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: "` + kubeRouterUser + `"}
rules:
- apiGroups: [""]
  resources: [pods, namespaces, nodes, services, endpoints]
  verbs: [get, list, watch]
- apiGroups: [discovery.k8s.io]
  resources: [endpointslices]
  verbs: [get, list, watch]
- apiGroups: [networking.k8s.io]
  resources: [networkpolicies]
  verbs: [get, list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: "` + kubeRouterUser + `"}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "` + kubeRouterUser + `"}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: "` + kubeRouterUser + `"}]
`
