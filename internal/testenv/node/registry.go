package node

import (
	"fmt"
	"io"
	"log"
	"net/http"
	"path/filepath"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/c5c3/glance-krm/internal/ocilayout"
)

// StartRegistry serves an image registry (go-containerregistry's, with
// the OCI referrers API) on the node's own loopback, and tells containerd
// to pull from it over http (a hosts.toml under the registry config_path
// containerdConfig names, read at each pull): a pod's image
// <host>/<repository>@sha256:… is then pulled by the kubelet as from any
// registry, by digest, the platform picked from the index. The registry
// stops with the node. It returns host:port.
func (n *Node) StartRegistry() (string, error) {
	if n.registry != "" {
		return n.registry, nil
	}
	ln, err := n.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("listening in the node: %w", err)
	}
	srv := &http.Server{ //nolint:gosec // a test node's own loopback registry
		Handler:           registry.New(registry.WithReferrersSupport(true), registry.Logger(log.New(io.Discard, "", 0))),
		ReadHeaderTimeout: time.Minute,
	}
	go func() { _ = srv.Serve(ln) }()
	n.closers = append(n.closers, srv.Close)
	host := ln.Addr().String()
	hosts := fmt.Sprintf("server = %q\n\n[host.%q]\n  capabilities = [\"pull\", \"resolve\"]\n", "http://"+host, "http://"+host)
	if err := n.l.write(filepath.Join("certs.d", host, "hosts.toml"), hosts); err != nil {
		return "", err
	}
	n.registry = host
	return host, nil
}

// PushIndex pushes the image index of the OCI layout at dir (what make
// image writes, build/oci/<image>) to the node's registry as repository,
// through the node's network, and returns its reference by digest.
func (n *Node) PushIndex(dir, repository string) (string, error) {
	host, err := n.StartRegistry()
	if err != nil {
		return "", err
	}
	idx, digest, err := ocilayout.Index(dir)
	if err != nil {
		return "", err
	}
	tag, err := name.NewTag(host+"/"+repository+":pushed", name.Insecure)
	if err != nil {
		return "", err
	}
	transport := &http.Transport{DialContext: n.DialContext}
	defer transport.CloseIdleConnections()
	if err := remote.WriteIndex(tag, idx, remote.WithTransport(transport)); err != nil {
		return "", fmt.Errorf("pushing %s to the node's registry: %w", dir, err)
	}
	return host + "/" + repository + "@" + digest.String(), nil
}
