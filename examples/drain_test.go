package examples_test

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestDrainOfTheDefaultStoreFailsTheBuild: with the real kustomize, a
// store annotated to drain while it is the default fails the build,
// naming the GlanceBackend, the annotation and the rule; the same commit
// with the default moved to the target builds, with the drain's Job and
// its record.
func TestDrainOfTheDefaultStoreFailsTheBuild(t *testing.T) {
	dir := copyExample(t, "generated")
	f := filepath.Join(dir, "glance.yaml")
	edit(t, f, "  name: ceph-rgw\n  namespace: openstack\n", "  name: ceph-rgw\n  namespace: openstack\n  annotations:\n    glance.openstack.c5c3.io/drain-to: garage\n")
	edit(t, f, "      name: ceph-rgw-s3-credentials\n", `      name: ceph-rgw-s3-credentials
---
apiVersion: glance.openstack.c5c3.io/v1alpha1
kind: GlanceBackend
metadata:
  name: garage
  namespace: openstack
spec:
  glanceRef:
    name: glance
  type: S3
  isDefault: false
  s3:
    host: http://garage.storage.svc:3900
    bucket: glance
    credentialsSecretRef:
      name: garage-s3-credentials
`)
	out, stderr, err := build(t, dir)
	if err == nil {
		t.Fatalf("kustomize build succeeded draining the default store:\n%s", out)
	}
	for _, want := range []string{"GlanceBackend/openstack/ceph-rgw", "metadata.annotations[glance.openstack.c5c3.io/drain-to]",
		`store "ceph-rgw" is the default store of Image API "default"`, "new uploads land in the default store and would be orphaned"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if out != "" {
		t.Errorf("a failed build printed manifests:\n%s", out)
	}

	// The same commit moves the default to the target: it builds.
	edit(t, f, "  isDefault: true\n", "  isDefault: false\n")
	edit(t, f, "  isDefault: false\n  s3:\n    host: http://garage", "  isDefault: true\n  s3:\n    host: http://garage")
	out, stderr, err = build(t, dir)
	if err != nil {
		t.Fatalf("kustomize build failed with the default moved to the target: %v\n%s", err, stderr)
	}
	for _, want := range []string{"glance.openstack.c5c3.io/drain-from: ceph-rgw", "name: glance-store-drain-ceph-rgw\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("the build lacks %q", want)
		}
	}
}
