package node

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Kubectl runs the node's kubectl (the assets' one) against it, with in
// as standard input when it is not nil.
func (n *Node) Kubectl(in []byte, args ...string) ([]byte, error) {
	cmd := exec.Command(n.assets.bin("kubectl"), append([]string{"--kubeconfig", n.Kubeconfig}, args...)...)
	if in != nil {
		cmd.Stdin = bytes.NewReader(in)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return out.Bytes(), fmt.Errorf("kubectl %s: %w\n%s", strings.Join(args, " "), err, errb.String())
	}
	return out.Bytes(), nil
}

// Apply is kubectl apply (server-side, forced) of manifests.
func (n *Node) Apply(manifests string) error {
	_, err := n.Kubectl([]byte(manifests), "apply", "--server-side", "--force-conflicts", "-f", "-")
	return err
}

// binaryImage is an image of one static program of the assets at /name.
func (n *Node) binaryImage(cache, name string, extra map[string]File) (string, string, error) {
	key, err := fileKey(n.assets.bin(name))
	if err != nil {
		return "", "", err
	}
	ref := "localhost/glance-krm-node/" + name + ":" + key
	files := map[string]File{"/" + name: {From: n.assets.bin(name), Mode: 0o755}}
	for k, v := range extra {
		files[k] = v
	}
	archive := ArchiveName(cache, name, key)
	return ref, archive, BuildArchive(archive, Image{Ref: ref, Files: files, Entrypoint: []string{"/" + name}})
}

func fileKey(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer func() { _ = f.Close() }()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil))[:12], nil
}

// installBase imports the pause image and runs CoreDNS as the cluster's
// DNS (Service kube-dns at DNSIP), as kubeadm would.
func (n *Node) installBase(cache string) error {
	pause := n.assets.bin("pause")
	if err := BuildArchive(ArchiveName(cache, "pause", "1"), Image{Ref: PauseImage,
		Files: map[string]File{"/pause": {From: pause, Mode: 0o755}}, Entrypoint: []string{"/pause"}}); err != nil {
		return err
	}
	ref, archive, err := n.binaryImage(cache, "coredns", map[string]File{"/etc/passwd": {Content: []byte("root:x:0:0:root:/:/coredns\n")}})
	if err != nil {
		return err
	}
	if err := n.Import(ArchiveName(cache, "pause", "1"), archive); err != nil {
		return err
	}
	return n.Apply(strings.ReplaceAll(corednsManifests, "COREDNS_IMAGE", ref))
}

// InstallMetricsServer runs metrics-server (the resource metrics API the
// horizontal pod autoscaler reads) and waits until the API serves.
func (n *Node) InstallMetricsServer(cache string) error {
	ref, archive, err := n.binaryImage(cache, "metrics-server", nil)
	if err != nil {
		return err
	}
	if err := n.Import(archive); err != nil {
		return err
	}
	if err := n.Apply(strings.ReplaceAll(metricsServerManifests, "METRICS_SERVER_IMAGE", ref)); err != nil {
		return err
	}
	return n.WaitAvailable("kube-system", "metrics-server", 2*time.Minute)
}

// WaitAvailable waits for a Deployment's Available condition.
func (n *Node) WaitAvailable(namespace, name string, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		d, err := n.Client.AppsV1().Deployments(namespace).Get(context.Background(), name, metav1.GetOptions{})
		if err == nil {
			for _, c := range d.Status.Conditions {
				if c.Type == appsv1.DeploymentAvailable && c.Status == "True" && d.Status.ObservedGeneration >= d.Generation {
					return nil
				}
			}
		}
		if time.Now().After(deadline) {
			pods, _ := n.Kubectl(nil, "get", "pods", "-n", namespace, "-o", "wide")
			events, _ := n.Kubectl(nil, "get", "events", "-n", namespace, "--sort-by=.lastTimestamp")
			logs := n.podLogs(namespace, d)
			return fmt.Errorf("deployment %s/%s is not Available after %s (%w)\n%s\n%s\n%s", namespace, name, limit, err, pods, lastLines(string(events), 25), logs)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// podLogs are the last lines of every container of a Deployment's pods
// that is not ready, and of its previous run when it restarted.
func (n *Node) podLogs(namespace string, d *appsv1.Deployment) string {
	if d == nil || d.Spec.Selector == nil {
		return ""
	}
	sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
	if err != nil {
		return ""
	}
	pods, err := n.Client.CoreV1().Pods(namespace).List(context.Background(), metav1.ListOptions{LabelSelector: sel.String()})
	if err != nil {
		return err.Error()
	}
	var b strings.Builder
	for _, p := range pods.Items {
		for _, c := range append(p.Status.InitContainerStatuses, p.Status.ContainerStatuses...) {
			if c.Ready {
				continue
			}
			for _, prev := range []bool{false, true} {
				if prev && c.RestartCount == 0 {
					continue
				}
				out, _ := n.Kubectl(nil, "-n", namespace, "logs", p.Name, "-c", c.Name, fmt.Sprintf("--previous=%v", prev), "--tail=25")
				fmt.Fprintf(&b, "--- %s/%s (previous: %v):\n%s\n", p.Name, c.Name, prev, out)
			}
		}
	}
	return b.String()
}

func lastLines(s string, n int) string {
	l := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(l[max(0, len(l)-n):], "\n")
}

const corednsManifests = `apiVersion: v1
kind: ServiceAccount
metadata: {name: coredns, namespace: kube-system}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: "glance-krm-node:coredns"}
rules:
- apiGroups: [""]
  resources: [endpoints, services, pods, namespaces]
  verbs: [list, watch]
- apiGroups: [discovery.k8s.io]
  resources: [endpointslices]
  verbs: [list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: "glance-krm-node:coredns"}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "glance-krm-node:coredns"}
subjects: [{kind: ServiceAccount, name: coredns, namespace: kube-system}]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: coredns, namespace: kube-system}
data:
  Corefile: |
    .:53 {
        errors
        health :8080
        ready :8181
        kubernetes cluster.local in-addr.arpa ip6.arpa {
            pods insecure
            fallthrough in-addr.arpa ip6.arpa
        }
        cache 30
        loadbalance
    }
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: coredns, namespace: kube-system, labels: {k8s-app: kube-dns}}
spec:
  replicas: 1
  selector: {matchLabels: {k8s-app: kube-dns}}
  template:
    metadata: {labels: {k8s-app: kube-dns}}
    spec:
      serviceAccountName: coredns
      dnsPolicy: Default
      containers:
      - name: coredns
        image: COREDNS_IMAGE
        imagePullPolicy: Never
        args: [-conf, /etc/coredns/Corefile]
        ports:
        - {name: dns, containerPort: 53, protocol: UDP}
        - {name: dns-tcp, containerPort: 53, protocol: TCP}
        # A busy two-core node answers late: DNS must not flap with it.
        readinessProbe:
          httpGet: {path: /ready, port: 8181}
          periodSeconds: 2
          timeoutSeconds: 5
          failureThreshold: 15
        livenessProbe:
          httpGet: {path: /health, port: 8080}
          timeoutSeconds: 5
          failureThreshold: 10
        resources:
          requests: {cpu: 100m, memory: 64Mi}
        volumeMounts: [{name: config, mountPath: /etc/coredns}]
      volumes: [{name: config, configMap: {name: coredns}}]
---
apiVersion: v1
kind: Service
metadata: {name: kube-dns, namespace: kube-system, labels: {k8s-app: kube-dns}}
spec:
  clusterIP: ` + "10.96.0.10" + `
  selector: {k8s-app: kube-dns}
  ports:
  - {name: dns, port: 53, protocol: UDP}
  - {name: dns-tcp, port: 53, protocol: TCP}
`

const metricsServerManifests = `apiVersion: v1
kind: ServiceAccount
metadata: {name: metrics-server, namespace: kube-system}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: "glance-krm-node:metrics-server"}
rules:
- apiGroups: [""]
  resources: [nodes/metrics]
  verbs: [get]
- apiGroups: [""]
  resources: [pods, nodes]
  verbs: [get, list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: "glance-krm-node:metrics-server"}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "glance-krm-node:metrics-server"}
subjects: [{kind: ServiceAccount, name: metrics-server, namespace: kube-system}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: "glance-krm-node:metrics-server:auth-delegator"}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "system:auth-delegator"}
subjects: [{kind: ServiceAccount, name: metrics-server, namespace: kube-system}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: "glance-krm-node:metrics-server:auth-reader", namespace: kube-system}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: "extension-apiserver-authentication-reader"}
subjects: [{kind: ServiceAccount, name: metrics-server, namespace: kube-system}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: metrics-server, namespace: kube-system, labels: {k8s-app: metrics-server}}
spec:
  replicas: 1
  selector: {matchLabels: {k8s-app: metrics-server}}
  template:
    metadata: {labels: {k8s-app: metrics-server}}
    spec:
      serviceAccountName: metrics-server
      containers:
      - name: metrics-server
        image: METRICS_SERVER_IMAGE
        imagePullPolicy: Never
        args: [--cert-dir=/tmp, --secure-port=10250, --kubelet-insecure-tls, --kubelet-preferred-address-types=InternalIP,
               --kubelet-use-node-status-port, --metric-resolution=15s, --kubelet-request-timeout=10s]
        ports: [{name: https, containerPort: 10250}]
        readinessProbe:
          httpGet: {path: /readyz, port: https, scheme: HTTPS}
          periodSeconds: 2
        securityContext: {runAsNonRoot: true, runAsUser: 1000, readOnlyRootFilesystem: true, allowPrivilegeEscalation: false}
        volumeMounts: [{name: tmp, mountPath: /tmp}]
      volumes: [{name: tmp, emptyDir: {}}]
---
apiVersion: v1
kind: Service
metadata: {name: metrics-server, namespace: kube-system}
spec:
  selector: {k8s-app: metrics-server}
  ports: [{name: https, port: 443, targetPort: https}]
---
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata: {name: v1beta1.metrics.k8s.io}
spec:
  service: {name: metrics-server, namespace: kube-system}
  group: metrics.k8s.io
  version: v1beta1
  insecureSkipTLSVerify: true
  groupPriorityMinimum: 100
  versionPriority: 100
`
