// The fixtures the function's tests share: ResourceLists built from YAML
// documents and test objects, one run of the function, and what to read
// back from its output.

package glancekrm

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/kio"
)

// resourceList wraps multi-document YAML into a ResourceList, the way
// kustomize and kpt hand objects to the function.
func resourceList(t testing.TB, docs []byte) []byte {
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

// runFn runs the function on a ResourceList as the binary does, and
// reports whether it failed (the binary's non-zero exit).
func runFn(t testing.TB, rl []byte) ([]byte, bool) {
	t.Helper()
	out, _, err := Transform(rl)
	if err != nil && !errors.Is(err, ErrFunctionFailed) {
		t.Fatalf("function broke instead of reporting a result: %v", err)
	}
	return out, err != nil
}

// itemsOf strips the results from an output ResourceList, to feed it back
// in as kpt does when it re-runs a pipeline on its own output.
func itemsOf(t testing.TB, out []byte) []byte {
	t.Helper()
	rl, err := fn.ParseResourceList(out)
	if err != nil {
		t.Fatal(err)
	}
	rl.Results = nil
	b, err := rl.ToYAML()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// runFile runs the function on the objects of a YAML file and parses its
// answer.
func runFile(t testing.TB, path string) (*fn.ResourceList, bool) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out, failed := runFn(t, resourceList(t, raw))
	rl, err := fn.ParseResourceList(out)
	if err != nil {
		t.Fatal(err)
	}
	return rl, failed
}

func testBackend(name, glance string, isDefault bool) string {
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

// testWorkload is a Deployment with one container; container is the YAML
// of that container's fields after its name.
func testWorkload(name, labels, container string) string {
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

func docs(d ...string) string { return strings.Join(d, "---\n") }

func find(items fn.KubeObjects, kind, name string) *fn.KubeObject {
	for _, o := range items {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	return nil
}

func resultLines(rs fn.Results) string {
	var b strings.Builder
	for _, r := range rs {
		b.WriteString("  " + string(r.Severity) + ": " + r.Message + "\n")
	}
	return b.String()
}

// generatedInput is a ResourceList of n Glances, each with backends
// GlanceBackends (the first the default) and a glance-api Deployment,
// spread over a few namespaces: the shape of a large real repository.
func generatedInput(n, backends int) []byte { return generatedInputOf(n, backends, true) }

// generatedInputOf is generatedInput with or without the Deployments
// (without them the function generates each Glance's workload).
func generatedInputOf(n, backends int, workloads bool) []byte {
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

// errorResults tells whether a result is an error.
func errorResults(rs fn.Results) bool {
	for _, r := range rs {
		if r.Severity == fn.Error {
			return true
		}
	}
	return false
}
