// Package fntest holds the fixtures the function's tests share: the
// objects they start from (a Glance, a GlanceBackend, a workload, a large
// generated input) and the ResourceList around them, and what they read
// back from the function's answer. It runs nothing of the function, so
// any package's tests may use it.
package fntest

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/kio"
)

// Glance is a minimal valid Glance ns/glance of 2025.2, without stores.
const Glance = `apiVersion: glance.openstack.c5c3.io/v1alpha1
kind: Glance
metadata: {name: glance, namespace: ns}
spec:
  openStackRelease: "2025.2"
  image: {repository: ghcr.io/c5c3/glance, tag: "2025.2"}
  database: {host: mariadb, database: glance, secretRef: {name: db}}
  cache: {servers: ["memcached:11211"]}
  keystoneEndpoint: http://keystone:5000/v3
  serviceUser: {secretRef: {name: svc}}
`

// ResourceList wraps multi-document YAML into a ResourceList, the way
// kustomize and kpt hand objects to the function.
func ResourceList(t testing.TB, docs []byte) []byte {
	t.Helper()
	nodes, err := (&kio.ByteReader{Reader: bytes.NewReader(docs), OmitReaderAnnotations: true}).Read()
	if err != nil {
		t.Fatalf("parsing input: %v", err)
	}
	rl := &fn.ResourceList{Items: fn.MoveToKubeObjects(nodes), FunctionConfig: fn.NewEmptyKubeObject()}
	out, err := rl.ToYAML()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Backend is an S3 GlanceBackend ns/<name> attached to the Glance named
// glance.
func Backend(name, glance string, isDefault bool) string {
	return fmt.Sprintf(`apiVersion: glance.openstack.c5c3.io/v1alpha1
kind: GlanceBackend
metadata: {name: %s, namespace: ns}
spec:
  glanceRef: {name: %s}
  type: S3
  isDefault: %v
  s3: {host: https://s3.example, bucket: %s-bucket, credentialsSecretRef: {name: %s-creds}}
`, name, glance, isDefault, name, name)
}

// Workload is a Deployment with one container; container is the YAML
// of that container's fields after its name.
func Workload(name, labels, container string) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: %s, namespace: ns%s}
spec:
  selector: {matchLabels: {app: x}}
  template:
    metadata: {labels: {app: x}}
    spec:
      containers:
      - name: glance-api
%s`, name, labels, container)
}

// Docs joins YAML documents into one stream.
func Docs(d ...string) string { return strings.Join(d, "---\n") }

// Find is the object of that kind and name, nil when there is none.
func Find(items fn.KubeObjects, kind, name string) *fn.KubeObject {
	for _, o := range items {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	return nil
}

// ResultLines are results, one indented line each, for a failure message.
func ResultLines(rs fn.Results) string {
	var b strings.Builder
	for _, r := range rs {
		b.WriteString("  " + string(r.Severity) + ": " + r.Message + "\n")
	}
	return b.String()
}

// GeneratedInput is a ResourceList of n Glances, each with backends
// GlanceBackends (the first the default) and a glance-api Deployment,
// spread over a few namespaces: the shape of a large real repository.
func GeneratedInput(n, backends int) []byte { return GeneratedInputOf(n, backends, true) }

// GeneratedInputOf is GeneratedInput with or without the Deployments
// (without them the function generates each Glance's workload).
func GeneratedInputOf(n, backends int, workloads bool) []byte {
	var b strings.Builder
	b.WriteString("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n")
	for g := range n {
		ns := fmt.Sprintf("openstack-%d", g%7)
		name := fmt.Sprintf("glance-%04d", g)
		fmt.Fprintf(&b, `- apiVersion: glance.openstack.c5c3.io/v1alpha1
  kind: Glance
  metadata: {name: %s, namespace: %s}
  spec:
    openStackRelease: "2025.2"
    image: {repository: ghcr.io/c5c3/glance, tag: "2025.2"}
    database: {host: mariadb, database: glance, secretRef: {name: %s-db}}
    keystoneEndpoint: http://keystone.%s.svc:5000/v3
    serviceUser: {secretRef: {name: %s-service-user}}
    cache: {servers: ["memcached-0.%s.svc:11211", "memcached-1.%s.svc:11211"]}
    extraConfig: {DEFAULT: {debug: "false", workers: "4"}}
`, name, ns, name, ns, name, ns, ns)
		if workloads {
			fmt.Fprintf(&b, `- apiVersion: apps/v1
  kind: Deployment
  metadata: {name: %s, namespace: %s, labels: {app: %s}}
  spec:
    replicas: 3
    selector: {matchLabels: {app: %s}}
    template:
      metadata: {labels: {app: %s}}
      spec:
        containers:
        - name: glance-api
          image: ghcr.io/c5c3/glance:2025.2
          command: [glance-api]
          ports: [{name: api, containerPort: 9292}]
          env: [{name: TZ, value: UTC}]
`, name, ns, name, name, name)
		}
		for i := range backends {
			fmt.Fprintf(&b, `- apiVersion: glance.openstack.c5c3.io/v1alpha1
  kind: GlanceBackend
  metadata: {name: %s-store-%d, namespace: %s}
  spec:
    glanceRef: {name: %s}
    type: S3
    isDefault: %t
    s3:
      host: https://s3-%d.example.com
      bucket: images-%d
      region: region-%d
      credentialsSecretRef: {name: %s-store-%d-credentials}
    extraOptions: {s3_store_thread_pools: "10"}
`, name, i, ns, name, i == 0, i, i, i, name, i)
		}
	}
	return []byte(b.String())
}
