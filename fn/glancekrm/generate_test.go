package glancekrm

import (
	"fmt"
	"strings"
)

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
