package glancekrm_test

import (
	"fmt"
	"regexp"

	"github.com/kptdev/krm-functions-sdk/go/fn"

	"github.com/c5c3/glance-krm/fn/glancekrm"
)

// Process renders a Glance and its store into a content-hashed Secret and
// ConfigMap, generates the workload, and says so in its results; a
// second default store would instead be an error result and render
// nothing.
func ExampleProcess() {
	rl, err := fn.ParseResourceList([]byte(`apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
- apiVersion: glance.openstack.c5c3.io/v1alpha1
  kind: Glance
  metadata: {name: glance, namespace: openstack}
  spec:
    openStackRelease: "2025.2"
    image: {repository: ghcr.io/c5c3/glance, tag: "2025.2"}
    database: {host: mariadb, database: glance, secretRef: {name: glance-db}}
    cache: {servers: ["memcached:11211"]}
    keystoneEndpoint: http://keystone:5000/v3
    serviceUser: {secretRef: {name: glance-service-user}}
- apiVersion: glance.openstack.c5c3.io/v1alpha1
  kind: GlanceBackend
  metadata: {name: primary, namespace: openstack}
  spec:
    glanceRef: {name: glance}
    type: S3
    isDefault: true
    s3: {host: "http://s3:9000", bucket: images, credentialsSecretRef: {name: s3}}
`))
	if err != nil {
		panic(err)
	}
	ok, _ := glancekrm.Process(rl)
	// The hashes follow the rendered content (the golden tests pin them).
	hash := regexp.MustCompile(`-[0-9a-f]{8,10}\b`)
	fmt.Println("ok:", ok)
	for _, o := range rl.Items {
		fmt.Println(o.GetKind(), hash.ReplaceAllString(o.GetName(), "-<hash>"))
	}
	for _, r := range rl.Results {
		fmt.Println(r.Severity, hash.ReplaceAllString(r.Message, "-<hash>"))
	}
	// Output:
	// ok: true
	// Glance glance
	// GlanceBackend primary
	// Secret glance-backends-<hash>
	// ConfigMap glance-config-<hash>
	// Job glance-db-sync-<hash>
	// Deployment glance
	// PodDisruptionBudget glance
	// Job glance-db-contract-<hash>
	// Service glance
	// info glance-krm: rendered Glance openstack/glance: stores primary (default primary); Secret glance-backends-<hash>, ConfigMap glance-config-<hash>; wired no workload; generated Job glance-db-sync-<hash>, Deployment glance, PodDisruptionBudget glance, Job glance-db-contract-<hash>, Service glance
}
