//go:build e2e

package node_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/c5c3/glance-krm/internal/testenv/node"
)

// TestNetworkPolicies: on a node with kube-router, an ingress policy lets
// only role=client pods reach the server (through its Service and
// directly), and an egress policy keeps the clients from every address but
// the server's. Each pod is asked from the node's own namespace, which no
// policy isolates it from, to connect somewhere itself; so every verdict
// is a pod's, and without an enforcer the test fails waiting for the first
// refusal.
func TestNetworkPolicies(t *testing.T) {
	assets, kubeRouter := node.FindAssets(t), node.FindKubeRouter(t)
	ref, archive := netcheckImage(t)
	n := node.StartWith(t, assets, node.Options{KubeRouter: kubeRouter})
	t.Logf("node with kube-router Ready in %s", n.Ready)
	if err := n.Import(archive); err != nil {
		t.Fatal(err)
	}
	if err := n.Apply(netpolWorkload(ref)); err != nil {
		t.Fatal(err)
	}
	ips := waitPodIPs(t, n, "netpol", 2*time.Minute, "server", "other", "client", "stranger")
	svc, err := n.Client.CoreV1().Services("netpol").Get(context.Background(), "server", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	service := net.JoinHostPort(svc.Spec.ClusterIP, "80")
	serverPod := net.JoinHostPort(ips["server"], "8080")
	other := net.JoinHostPort(ips["other"], "8080")
	api := net.JoinHostPort(node.IP, "6443")
	p := prober{t: t, n: n, ips: ips}

	// What the policies take away must be there first.
	p.expect("no policy", []reach{
		{"client", service, true}, {"stranger", service, true}, {"client", other, true}, {"client", api, true},
	})

	if err := n.Apply(ingressPolicy); err != nil {
		t.Fatal(err)
	}
	p.expect("ingress policy", []reach{
		{"client", service, true}, {"client", serverPod, true},
		{"stranger", service, false}, {"stranger", serverPod, false},
		{"stranger", other, true},
	})

	if err := n.Apply(egressPolicy); err != nil {
		t.Fatal(err)
	}
	p.expect("egress policy", []reach{
		{"client", service, true},
		{"client", other, false}, {"client", api, false},
		{"stranger", other, true},
	})
}

// reach is one verdict: whether pod from may connect to to.
type reach struct {
	from, to string
	open     bool
}

type prober struct {
	t   *testing.T
	n   *node.Node
	ips map[string]string
}

// expect waits up to a minute for every verdict to hold at once (kube-router
// applies a change within its next sync), then checks they still hold
// twice over, a second apart.
func (p prober) expect(stage string, want []reach) {
	p.t.Helper()
	deadline := time.Now().Add(time.Minute)
	for held := 0; held < 3; {
		bad := p.check(want)
		if bad == "" {
			held++
			time.Sleep(time.Second)
			continue
		}
		if held > 0 || time.Now().After(deadline) {
			out, _ := p.n.InNetwork("iptables", "-t", "filter", "-S")
			p.t.Fatalf("%s: %s (after %d good rounds)\nkube-router's log:\n%s\nthe node's filter table:\n%s",
				stage, bad, held, p.n.Logs("kube-router", 30), out)
		}
		time.Sleep(time.Second)
	}
	p.t.Logf("%s: %d verdicts hold", stage, len(want))
}

// check is "" when every verdict holds, else the ones that do not.
func (p prober) check(want []reach) string {
	p.t.Helper()
	var bad []string
	for _, w := range want {
		open, answer := p.dial(w.from, w.to)
		if open != w.open {
			bad = append(bad, fmt.Sprintf("%s -> %s: %s (want open=%v)", w.from, w.to, answer, w.open))
		}
	}
	return strings.Join(bad, "; ")
}

// dial asks pod from to connect to to. Only the pod's own answer counts:
// a failure to ask it fails the test rather than pass for a refusal.
func (p prober) dial(from, to string) (bool, string) {
	p.t.Helper()
	c := &http.Client{Timeout: 15 * time.Second, Transport: &http.Transport{DialContext: p.n.DialContext, DisableKeepAlives: true}}
	resp, err := c.Get("http://" + net.JoinHostPort(p.ips[from], "8080") + "/dial?to=" + url.QueryEscape(to))
	if err != nil {
		p.t.Fatalf("asking %s to dial %s: %v", from, to, err)
	}
	defer func() { _ = resp.Body.Close() }()
	b, _ := io.ReadAll(resp.Body)
	answer := strings.TrimSpace(string(b))
	switch resp.StatusCode {
	case http.StatusOK:
		return true, answer
	case http.StatusBadGateway:
		return false, answer
	}
	p.t.Fatalf("asking %s to dial %s: %s %s", from, to, resp.Status, answer)
	return false, ""
}

// netcheckImage builds testdata/netcheck (static, as the image has nothing
// else) into an image once per source.
func netcheckImage(t *testing.T) (ref, archive string) {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("testdata", "netcheck", "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(src)
	key := hex.EncodeToString(sum[:])[:12]
	ref, archive = "localhost/glance-krm-node/netcheck:"+key, node.ArchiveName(node.Cache(), "netcheck", key)
	if _, err := os.Stat(archive); err == nil {
		return ref, archive
	}
	bin := filepath.Join(t.TempDir(), "netcheck")
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", bin, "./testdata/netcheck")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building netcheck: %v\n%s", err, out)
	}
	err = node.BuildArchive(archive, node.Image{Ref: ref, Entrypoint: []string{"/netcheck"},
		Files: map[string]node.File{"/netcheck": {From: bin, Mode: 0o755}}})
	if err != nil {
		t.Fatal(err)
	}
	return ref, archive
}

// waitPodIPs waits for the pods to be Ready and returns their addresses.
func waitPodIPs(t *testing.T, n *node.Node, namespace string, limit time.Duration, names ...string) map[string]string {
	t.Helper()
	deadline := time.Now().Add(limit)
	ips := map[string]string{}
	for len(ips) < len(names) {
		for _, name := range names {
			pod, err := n.Client.CoreV1().Pods(namespace).Get(context.Background(), name, metav1.GetOptions{})
			if err != nil {
				continue
			}
			for _, c := range pod.Status.Conditions {
				if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue && pod.Status.PodIP != "" {
					ips[name] = pod.Status.PodIP
				}
			}
		}
		if time.Now().After(deadline) {
			out, _ := n.Kubectl(nil, "get", "pods,events", "-n", namespace, "-o", "wide")
			t.Fatalf("pods of %s not Ready after %s (Ready: %v)\n%s", namespace, limit, ips, out)
		}
		time.Sleep(500 * time.Millisecond)
	}
	return ips
}

// netpolWorkload is four pods of netcheck, told apart by their labels,
// and the server's Service.
func netpolWorkload(image string) string {
	docs := []string{"apiVersion: v1\nkind: Namespace\nmetadata: {name: netpol}\n",
		"apiVersion: v1\nkind: Service\nmetadata: {name: server, namespace: netpol}\n" +
			"spec: {selector: {app: server}, ports: [{port: 80, targetPort: 8080}]}\n"}
	for _, p := range []struct{ name, labels string }{
		{"server", "app: server"}, {"other", "app: other"}, {"client", "role: client"}, {"stranger", "role: stranger"},
	} {
		docs = append(docs, fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: %s, namespace: netpol, labels: {%s}}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: netcheck
    image: %s
    imagePullPolicy: Never
    ports: [{containerPort: 8080}]
    readinessProbe: {httpGet: {path: /, port: 8080}, periodSeconds: 1}
    resources: {requests: {cpu: 10m, memory: 16Mi}}
    securityContext: {runAsNonRoot: true, runAsUser: 65534, allowPrivilegeEscalation: false, readOnlyRootFilesystem: true}
`, p.name, p.labels, image))
	}
	return strings.Join(docs, "---\n")
}

const ingressPolicy = `apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: server-from-clients, namespace: netpol}
spec:
  podSelector: {matchLabels: {app: server}}
  policyTypes: [Ingress]
  ingress:
  - from: [{podSelector: {matchLabels: {role: client}}}]
    ports: [{protocol: TCP, port: 8080}]
`

const egressPolicy = `apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: clients-to-server-only, namespace: netpol}
spec:
  podSelector: {matchLabels: {role: client}}
  policyTypes: [Egress]
  egress:
  - to: [{podSelector: {matchLabels: {app: server}}}]
    ports: [{protocol: TCP, port: 8080}]
`
