package node

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// Logs is the last lines of one daemon's log ("kubelet", "containerd",
// "kube-apiserver", ...; "init" for the node's PID 1).
func (n *Node) Logs(daemon string, lines int) string {
	b, err := os.ReadFile(n.l.path("log", daemon+".log"))
	if err != nil {
		return err.Error()
	}
	all := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return strings.Join(all[max(0, len(all)-lines):], "\n")
}

// LogFile is the path of one daemon's log.
func (n *Node) LogFile(daemon string) string { return n.l.path("log", daemon+".log") }

// HTTPClient is a client whose connections are made inside the node and
// whose host names are resolved by the cluster's DNS (CoreDNS), as a pod's
// are: http://glance.openstack.svc:9292 reaches a Service through
// kube-proxy.
func (n *Node) HTTPClient(timeout time.Duration) *http.Client {
	resolver := n.resolver()
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		if net.ParseIP(host) == nil {
			if !strings.Contains(host, ".") || strings.Count(host, ".") < 4 && !strings.HasSuffix(host, "."+ClusterDomain) {
				host += "." + ClusterDomain
			}
			ips, err := resolver.LookupHost(ctx, host)
			if err != nil {
				return nil, err
			}
			host = ips[0]
		}
		return n.DialContext(ctx, network, net.JoinHostPort(host, port))
	}
	return &http.Client{Timeout: timeout, Transport: &http.Transport{DialContext: dial, MaxIdleConnsPerHost: 16, IdleConnTimeout: 30 * time.Second}}
}

// resolver asks CoreDNS through its Service's ClusterIP, as a pod does.
func (n *Node) resolver() *net.Resolver {
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return n.DialContext(ctx, network, net.JoinHostPort(DNSIP, "53"))
	}}
}

// waitDNS waits until a name resolves through the DNS Service: CoreDNS
// Available is not yet kube-proxy's rules for its endpoints (until they
// are programmed, the Service's REJECT rule refuses every query).
func (n *Node) waitDNS(limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_, err := n.resolver().LookupHost(ctx, "kubernetes.default.svc."+ClusterDomain)
		cancel()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no name resolves through the DNS Service %s after %s: %w", DNSIP, limit, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// Import loads OCI archives into the node's containerd, where the kubelet
// finds them (imagePullPolicy IfNotPresent or Never: nothing is pulled).
func (n *Node) Import(archives ...string) error {
	for _, a := range archives {
		out, err := exec.Command("ctr", "--address", n.l.socket(), "-n", "k8s.io", "images", "import", a).CombinedOutput()
		if err != nil {
			return fmt.Errorf("importing %s: %w\n%s", a, err, out)
		}
	}
	return nil
}

// Memory is the resident memory of every process of the node (its
// daemons and its pods), in bytes.
func (n *Node) Memory() int64 {
	var total int64
	for _, pid := range n.inNamespace() {
		b, err := os.ReadFile("/proc/" + pid + "/status")
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
				kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
				total += kb * 1024
			}
		}
	}
	return total
}
