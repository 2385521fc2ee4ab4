package clusters

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

const kubeconfig = `apiVersion: v1
kind: Config
clusters:
- name: remote
  cluster: {server: "https://remote.example:6443", insecure-skip-tls-verify: true}
users:
- name: u
  user: {token: t}
contexts:
- name: c
  context: {cluster: remote, user: u}
current-context: c
`

func registration(name, rv string, labelled bool, data string) *corev1.Secret {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: DefaultNamespace, ResourceVersion: rv},
		Data: map[string][]byte{KeyKubeconfig: []byte(data)}}
	if labelled {
		s.Labels = map[string]string{LabelKubeconfig: "true"}
	}
	return s
}

// Each reason a name does not resolve is said in words a user can act on;
// a registration resolves to one client, made again only when its Secret
// changes.
func TestClient(t *testing.T) {
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	reader := fake.NewClientBuilder().WithScheme(scheme).WithObjects(
		registration("unlabelled", "", false, kubeconfig),
		registration("broken", "", true, "not: [a kubeconfig"),
		registration("remote", "", true, kubeconfig),
	).Build()
	r := &Registry{Reader: reader, Namespace: DefaultNamespace, Scheme: scheme}
	ctx := context.Background()
	for name, want := range map[string]string{
		"absent":     `target cluster "absent" is not registered: no Secret absent in namespace c5c3-clusters`,
		"unlabelled": "lacks the label sigs.k8s.io/multicluster-runtime-kubeconfig=true",
		"broken":     "is not a usable kubeconfig",
	} {
		if _, err := r.Client(ctx, name); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", name, err, want)
		}
	}
	first, err := r.Client(ctx, "remote")
	if err != nil {
		t.Fatal(err)
	}
	again, _ := r.Client(ctx, "remote")
	if first != again {
		t.Error("an unchanged registration made a new client")
	}
	var s corev1.Secret
	if err := reader.Get(ctx, client.ObjectKey{Namespace: DefaultNamespace, Name: "remote"}, &s); err != nil {
		t.Fatal(err)
	}
	s.Data[KeyKubeconfig] = []byte(strings.Replace(kubeconfig, "token: t", "token: rotated", 1))
	if err := reader.Update(ctx, &s); err != nil {
		t.Fatal(err)
	}
	if rotated, _ := r.Client(ctx, "remote"); rotated == first {
		t.Error("a changed registration kept the old client")
	}
}
