package manager_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/kustomize/kyaml/kio"

	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

// severalAPIs is a Glance with two Image APIs: default serves garage-a,
// next serves garage-a and garage-b.
const severalAPIs = `apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
- apiVersion: glance.openstack.c5c3.io/v1alpha1
  kind: Glance
  metadata: {name: glance, namespace: NS}
  spec:
    openStackRelease: "2025.2"
    image: {repository: ghcr.io/c5c3/glance, tag: "2025.2"}
    keystoneEndpoint: http://keystone:5000/v3
    serviceUser: {secretRef: {name: glance-service-user}}
    database: {host: mariadb, database: glance, secretRef: {name: glance-db}}
    cache: {servers: ["memcached:11211"]}
    apis:
    - name: default
      backends: [garage-a]
    - name: next
      backends: [garage-a, garage-b]
      defaultBackend: garage-b
- apiVersion: glance.openstack.c5c3.io/v1alpha1
  kind: GlanceBackend
  metadata: {name: garage-a, namespace: NS}
  spec: {glanceRef: {name: glance}, type: S3, isDefault: true, s3: {host: "http://s3:9000", bucket: a, credentialsSecretRef: {name: s3-credentials}}}
- apiVersion: glance.openstack.c5c3.io/v1alpha1
  kind: GlanceBackend
  metadata: {name: garage-b, namespace: NS}
  spec: {glanceRef: {name: glance}, type: S3, s3: {host: "http://s3:9000", bucket: b, credentialsSecretRef: {name: s3-credentials}}}
`

// rendered runs the function binary on a ResourceList and returns the
// items of the given kinds.
func rendered(t *testing.T, rl string, kinds ...string) []*unstructured.Unstructured {
	t.Helper()
	bin := os.Getenv("GLANCE_KRM_FN")
	if bin == "" {
		t.Fatal("GLANCE_KRM_FN is not set: run the tests through `make test`")
	}
	cmd := exec.Command(bin)
	cmd.Stdin = strings.NewReader(rl)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("the function failed: %v\n%s\n%s", err, stderr.String(), out.String())
	}
	nodes, err := (&kio.ByteReader{Reader: &out, OmitReaderAnnotations: true}).Read()
	if err != nil {
		t.Fatal(err)
	}
	var objs []*unstructured.Unstructured
	for _, n := range nodes {
		if !contains(kinds, n.GetKind()) {
			continue
		}
		m, err := n.Map()
		if err != nil {
			t.Fatal(err)
		}
		objs = append(objs, &unstructured.Unstructured{Object: m})
	}
	return objs
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestProjectionWithSeveralAPIs: with the function's generated
// Deployments of two APIs, a store is projected when every API that
// serves it mounts it: garage-b needs next, garage-a needs both.
func TestProjectionWithSeveralAPIs(t *testing.T) {
	ns := namespace(t)
	objs := rendered(t, strings.ReplaceAll(severalAPIs, "NS", ns), "Glance", "GlanceBackend", "Secret", "Deployment")
	var deployments []string
	for _, o := range objs {
		if o.GetKind() == "Deployment" {
			deployments = append(deployments, o.GetName())
		}
		create(t, o)
	}
	if fmt.Sprint(deployments) != "[glance glance-next]" {
		t.Fatalf("generated Deployments %v, want glance and glance-next", deployments)
	}
	create(t, credentialsSecret(ns, "s3-credentials", "a", "s"))
	g, a, b := &v1alpha1.Glance{}, &v1alpha1.GlanceBackend{}, &v1alpha1.GlanceBackend{}
	for obj, name := range map[client.Object]string{g: "glance", a: "garage-a", b: "garage-b"} {
		if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, obj); err != nil {
			t.Fatal(err)
		}
	}
	wantMessage(t, a, v1alpha1.ConditionConfigProjected, T, v1alpha1.ReasonConfigProjected, "Deployment glance, glance-next mount section [garage-a]")
	wantMessage(t, b, v1alpha1.ConditionConfigProjected, T, v1alpha1.ReasonConfigProjected, "Deployment glance-next mounts section [garage-b]")
	wantCondition(t, g, v1alpha1.ConditionBackendsReady, T, v1alpha1.ReasonAllBackendsProjected)

	// The API next loses its workload: both stores it serves wait for it.
	next := &appsv1.Deployment{}
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "glance-next"}, next); err != nil {
		t.Fatal(err)
	}
	if err := k8s.Delete(context.Background(), next); err != nil {
		t.Fatal(err)
	}
	wantMessage(t, b, v1alpha1.ConditionConfigProjected, F, v1alpha1.ReasonWaitingForProjection, `API "next" of Glance "glance" serves store "garage-b" but has no Deployment`)
	wantMessage(t, a, v1alpha1.ConditionConfigProjected, F, v1alpha1.ReasonWaitingForProjection, `API "next" of Glance "glance" serves store "garage-a" but has no Deployment`)
}
