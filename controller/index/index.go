// Package index holds the field indexes and event mappers both
// reconcilers use: which backends attach to a Glance, which reference a
// Secret, and which Glance a Deployment or rendered Secret belongs to.
package index

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

const (
	// BackendGlance indexes GlanceBackends by spec.glanceRef.name.
	BackendGlance = "spec.glanceRef.name"
	// BackendSecret indexes GlanceBackends by their credentials Secret.
	BackendSecret = "spec.s3.credentialsSecretRef.name"
	// GlanceTargetCluster indexes Glances by spec.targetClusterRef.name.
	GlanceTargetCluster = "spec.targetClusterRef.name"
)

// Setup registers the indexes with the manager's cache.
func Setup(ctx context.Context, mgr manager.Manager) error {
	fi := mgr.GetFieldIndexer()
	if err := fi.IndexField(ctx, &v1alpha1.GlanceBackend{}, BackendGlance, backendGlance); err != nil {
		return err
	}
	if err := fi.IndexField(ctx, &v1alpha1.GlanceBackend{}, BackendSecret, backendSecret); err != nil {
		return err
	}
	return fi.IndexField(ctx, &v1alpha1.Glance{}, GlanceTargetCluster, glanceTargetCluster)
}

func backendGlance(o client.Object) []string {
	return []string{o.(*v1alpha1.GlanceBackend).Spec.GlanceRef.Name}
}

func backendSecret(o client.Object) []string {
	if s3 := o.(*v1alpha1.GlanceBackend).Spec.S3; s3 != nil {
		return []string{s3.CredentialsSecretRef.Name}
	}
	return nil
}

func glanceTargetCluster(o client.Object) []string {
	if ref := o.(*v1alpha1.Glance).Spec.TargetClusterRef; ref != nil {
		return []string{ref.Name}
	}
	return nil
}

// Backends lists the GlanceBackends attached to a Glance.
func Backends(ctx context.Context, c client.Reader, namespace, glance string) ([]v1alpha1.GlanceBackend, error) {
	var list v1alpha1.GlanceBackendList
	err := c.List(ctx, &list, client.InNamespace(namespace), client.MatchingFields{BackendGlance: glance})
	return list.Items, err
}

// GlanceOf names the Glance a Deployment or a rendered Secret belongs to:
// its glance.openstack.c5c3.io/glance label, else (for a Deployment) its
// own name, since the function wires the workload named like the Glance.
func GlanceOf(o client.Object, byName bool) string {
	if g := o.GetLabels()[v1alpha1.LabelGlance]; g != "" {
		return g
	}
	if byName {
		return o.GetName()
	}
	return ""
}

// BackendsOfGlance maps an object to reconcile requests for every backend
// attached to the Glance it belongs to.
func BackendsOfGlance(c client.Reader, byName bool) func(context.Context, client.Object) []reconcile.Request {
	return func(ctx context.Context, o client.Object) []reconcile.Request {
		g := GlanceOf(o, byName)
		if g == "" {
			return nil
		}
		backends, err := Backends(ctx, c, o.GetNamespace(), g)
		if err != nil {
			return nil
		}
		return requests(backends)
	}
}

// BackendsOfSecret maps a Secret to the backends whose credentials it
// holds, (for a rendered backends Secret) to the backends of its Glance,
// and (for a cluster registration in registryNamespace) to the backends
// of every Glance targeting that cluster.
func BackendsOfSecret(c client.Reader, registryNamespace string) func(context.Context, client.Object) []reconcile.Request {
	ofGlance := BackendsOfGlance(c, false)
	return func(ctx context.Context, o client.Object) []reconcile.Request {
		var list v1alpha1.GlanceBackendList
		if err := c.List(ctx, &list, client.InNamespace(o.GetNamespace()), client.MatchingFields{BackendSecret: o.GetName()}); err != nil {
			return nil
		}
		out := append(requests(list.Items), ofGlance(ctx, o)...)
		if o.GetNamespace() != registryNamespace {
			return out
		}
		var glances v1alpha1.GlanceList
		if err := c.List(ctx, &glances, client.MatchingFields{GlanceTargetCluster: o.GetName()}); err != nil {
			return out
		}
		for _, g := range glances.Items {
			if backends, err := Backends(ctx, c, g.Namespace, g.Name); err == nil {
				out = append(out, requests(backends)...)
			}
		}
		return out
	}
}

// GlanceOfBackend maps a backend to its Glance.
func GlanceOfBackend(_ context.Context, o client.Object) []reconcile.Request {
	b, ok := o.(*v1alpha1.GlanceBackend)
	if !ok || b.Spec.GlanceRef.Name == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: b.Namespace, Name: b.Spec.GlanceRef.Name}}}
}

func requests(backends []v1alpha1.GlanceBackend) []reconcile.Request {
	out := make([]reconcile.Request, len(backends))
	for i, b := range backends {
		out[i] = reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&b)}
	}
	return out
}
