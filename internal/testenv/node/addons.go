package node

import (
	"bytes"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
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
	return programImage(cache, name, n.assets.bin(name), extra)
}

// programImage is an image of the static program at path, as /name.
func programImage(cache, name, path string, extra map[string]File) (string, string, error) {
	key, err := fileKey(path)
	if err != nil {
		return "", "", err
	}
	ref := "localhost/glance-krm-node/" + name + ":" + key
	files := map[string]File{"/" + name: {From: path, Mode: 0o755}}
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
	return n.Apply(strings.NewReplacer("COREDNS_IMAGE", ref, "DNS_IP", DNSIP).Replace(corednsManifests))
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

// InstallVPARecommender runs the VerticalPodAutoscaler's recommender
// (the program at binary) from upstream's manifests, its CRDs first, then
// its RBAC and Deployment with the image replaced, and waits until it is
// Available. It recommends from metrics-server's pod metrics.
func (n *Node) InstallVPARecommender(cache, binary, crds, rbac, deployment string) error {
	ref, archive, err := programImage(cache, "vpa-recommender", binary, nil)
	if err != nil {
		return err
	}
	if err := n.Import(archive); err != nil {
		return err
	}
	for _, m := range []string{crds, rbac} {
		if err := n.Apply(m); err != nil {
			return err
		}
	}
	d := regexp.MustCompile(`(?m)^(\s*image:\s*).*vpa-recommender:.*$`).ReplaceAllString(deployment, "${1}"+ref)
	if !strings.Contains(d, ref) {
		return fmt.Errorf("the recommender's Deployment names no vpa-recommender image to replace")
	}
	if err := n.Apply(d); err != nil {
		return err
	}
	return n.WaitAvailable("kube-system", "vpa-recommender", 2*time.Minute)
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

// corednsManifests is CoreDNS for the node's cluster DNS: its RBAC,
// Corefile, Deployment and the kube-dns Service (COREDNS_IMAGE and DNS_IP
// replaced).
//
//go:embed manifests/coredns.yaml
var corednsManifests string

// metricsServerManifests is metrics-server and its RBAC, APIService and
// Service (METRICS_SERVER_IMAGE replaced).
//
//go:embed manifests/metrics-server.yaml
var metricsServerManifests string
