package index

import (
	"context"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

// A fake client with the indexes Setup registers: the mappers are
// judged by which requests they return (the manager's integration tests
// run them on a real API server).
func indexed(t *testing.T, objs ...client.Object) client.Client {
	t.Helper()
	s := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return fake.NewClientBuilder().WithScheme(s).WithObjects(objs...).
		WithIndex(&v1alpha1.GlanceBackend{}, BackendGlance, backendGlance).
		WithIndex(&v1alpha1.GlanceBackend{}, BackendSecret, backendSecret).
		WithIndex(&v1alpha1.Glance{}, GlanceTargetCluster, glanceTargetCluster).Build()
}

func backend(ns, name, glance, secret string) *v1alpha1.GlanceBackend {
	b := &v1alpha1.GlanceBackend{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	b.Spec.GlanceRef.Name = glance
	b.Spec.S3 = &v1alpha1.S3BackendSpec{}
	b.Spec.S3.CredentialsSecretRef.Name = secret
	return b
}

func names(reqs []string) []string { slices.Sort(reqs); return reqs }

func keys(t *testing.T, f func(context.Context, client.Object) []reconcile.Request, o client.Object) []string {
	t.Helper()
	var out []string
	for _, r := range f(context.Background(), o) {
		out = append(out, r.String())
	}
	return names(out)
}

func TestBackendsOfSecret(t *testing.T) {
	target := &v1alpha1.Glance{ObjectMeta: metav1.ObjectMeta{Namespace: "remote", Name: "g"}}
	target.Spec.TargetClusterRef = &v1alpha1.ClusterRefSpec{Name: "cluster-a"}
	c := indexed(t,
		backend("openstack", "primary", "glance", "s3-primary"),
		backend("openstack", "secondary", "glance", "s3-shared"),
		backend("openstack", "other", "another", "s3-shared"),
		backend("elsewhere", "primary", "glance", "s3-primary"),
		backend("remote", "store", "g", "s3"),
		target,
	)
	secret := func(ns, name string, labels map[string]string) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels}}
	}
	cases := map[string]struct {
		obj  client.Object
		want []string
	}{
		"a credentials Secret: the backends naming it, in its namespace only": {
			secret("openstack", "s3-primary", nil), []string{"openstack/primary"}},
		"a Secret two backends share": {
			secret("openstack", "s3-shared", nil), []string{"openstack/other", "openstack/secondary"}},
		"a rendered Secret: every backend of its Glance": {
			secret("openstack", "glance-backends-abc", map[string]string{v1alpha1.LabelGlance: "glance"}),
			[]string{"openstack/primary", "openstack/secondary"}},
		"a cluster registration: the backends of the Glances targeting it": {
			secret("registry", "cluster-a", nil), []string{"remote/store"}},
		"a Secret of that name outside the registry namespace": {
			secret("openstack", "cluster-a", nil), nil},
		"an unrelated Secret": {secret("openstack", "tls", nil), nil},
	}
	f := BackendsOfSecret(c, "registry")
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if d := cmp.Diff(tc.want, keys(t, f, tc.obj)); d != "" {
				t.Errorf("(-want +got)\n%s", d)
			}
		})
	}
}

func TestBackendsOfGlance(t *testing.T) {
	c := indexed(t, backend("openstack", "primary", "glance", "s"), backend("openstack", "x", "other", "s"))
	dep := func(name string, labels map[string]string) *appsv1.Deployment {
		return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "openstack", Name: name, Labels: labels}}
	}
	cases := map[string]struct {
		byName bool
		obj    client.Object
		want   []string
	}{
		"a Deployment named like the Glance":            {true, dep("glance", nil), []string{"openstack/primary"}},
		"a Deployment labelled for it":                  {true, dep("api", map[string]string{v1alpha1.LabelGlance: "glance"}), []string{"openstack/primary"}},
		"the label wins over the name":                  {true, dep("glance", map[string]string{v1alpha1.LabelGlance: "other"}), []string{"openstack/x"}},
		"by label only: a Secret named like the Glance": {false, dep("glance", nil), nil},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if d := cmp.Diff(tc.want, keys(t, BackendsOfGlance(c, tc.byName), tc.obj)); d != "" {
				t.Errorf("(-want +got)\n%s", d)
			}
		})
	}
}

func TestGlanceOfBackend(t *testing.T) {
	if d := cmp.Diff([]string{"openstack/glance"}, keys(t, GlanceOfBackend, backend("openstack", "b", "glance", "s"))); d != "" {
		t.Errorf("(-want +got)\n%s", d)
	}
	if got := GlanceOfBackend(context.Background(), backend("openstack", "b", "", "s")); got != nil {
		t.Errorf("a backend naming no Glance maps to %v", got)
	}
	if got := GlanceOfBackend(context.Background(), &corev1.Secret{}); got != nil {
		t.Errorf("a Secret maps to %v", got)
	}
}
