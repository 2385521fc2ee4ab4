//go:build e2e

package node_test

import (
	"context"
	"crypto/tls"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/c5c3/glance-krm/internal/testenv/node"
)

// TestStartStop brings a node up (Ready, CoreDNS serving) and down again;
// Stop fails the test should anything of it remain on the host. In
// between, the API server answers through its Service: a name resolved by
// CoreDNS, a ClusterIP translated by kube-proxy.
func TestStartStop(t *testing.T) {
	n := node.Start(t, node.FindAssets(t))
	t.Logf("node Ready in %s", n.Ready)
	c := n.HTTPClient(10 * time.Second)
	c.Transport.(*http.Transport).TLSClientConfig = &tls.Config{InsecureSkipVerify: true}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "https://kubernetes.default.svc/version", nil)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	// Anonymous requests are refused: what matters is who answered.
	if !strings.Contains(string(b), "v1.37") && resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusForbidden {
		t.Errorf("GET /version through the kubernetes Service: %s %s", resp.Status, b)
	}
}

// TestMetricsServer serves the resource metrics API the autoscaler reads.
func TestMetricsServer(t *testing.T) {
	n := node.Start(t, node.FindAssets(t))
	if err := n.InstallMetricsServer(node.Cache()); err != nil {
		t.Fatal(err)
	}
}
