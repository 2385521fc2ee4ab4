// Package clusters resolves a Glance's spec.targetClusterRef: a
// registration is a kubeconfig Secret named after the cluster in the
// registry namespace, labelled sigs.k8s.io/multicluster-runtime-kubeconfig:
// "true" (the multicluster-runtime kubeconfig provider's convention).
package clusters

import (
	"context"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

const (
	// DefaultNamespace is where registrations live unless told otherwise.
	DefaultNamespace = "c5c3-clusters"
	// LabelKubeconfig marks a Secret as a cluster registration.
	LabelKubeconfig = "sigs.k8s.io/multicluster-runtime-kubeconfig"
	// KeyKubeconfig is the data key holding the kubeconfig.
	KeyKubeconfig = "kubeconfig"
)

// Registry turns a cluster name into a client for that cluster.
type Registry struct {
	// Reader reads registration Secrets uncached: they are few, and
	// caching Secrets would cache every Secret of the cluster.
	Reader    client.Reader
	Namespace string
	Scheme    *runtime.Scheme

	mu      sync.Mutex
	clients map[string]cached // by cluster name
}

type cached struct {
	resourceVersion string
	client          client.Client
}

// Client returns a client for the named cluster, or an error that says
// why the name does not resolve (it becomes the condition message).
func (r *Registry) Client(ctx context.Context, name string) (client.Client, error) {
	var s corev1.Secret
	key := client.ObjectKey{Namespace: r.Namespace, Name: name}
	if err := r.Reader.Get(ctx, key, &s); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("target cluster %q is not registered: no Secret %s in namespace %s", name, name, r.Namespace)
		}
		return nil, fmt.Errorf("target cluster %q: reading its registration: %w", name, err)
	}
	if s.Labels[LabelKubeconfig] != "true" {
		return nil, fmt.Errorf("target cluster %q is not registered: Secret %s/%s lacks the label %s=true", name, r.Namespace, name, LabelKubeconfig)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if c, ok := r.clients[name]; ok && c.resourceVersion == s.ResourceVersion {
		return c.client, nil
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(s.Data[KeyKubeconfig])
	if err != nil {
		return nil, fmt.Errorf("target cluster %q: the %s key of Secret %s/%s is not a usable kubeconfig: %w", name, KeyKubeconfig, r.Namespace, name, err)
	}
	c, err := client.New(cfg, client.Options{Scheme: r.Scheme})
	if err != nil {
		return nil, fmt.Errorf("target cluster %q: %w", name, err)
	}
	if r.clients == nil {
		r.clients = map[string]cached{}
	}
	r.clients[name] = cached{s.ResourceVersion, c}
	return c, nil
}
