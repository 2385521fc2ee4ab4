package examples_test

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestControlPlaneExample: the devstack ControlPlane of the seed's
// multi-store guide, built by real kustomize, projects the Glance and both
// stores and renders them; flipping the default in the ControlPlane
// changes only the config ConfigMap's name.
func TestControlPlaneExample(t *testing.T) {
	dir := copyExample(t, "controlplane")
	nodes := mustBuild(t, dir)
	for _, want := range []string{"Glance/controlplane-glance", "GlanceBackend/controlplane-glance-default",
		"GlanceBackend/controlplane-glance-secondary", "ControlPlane/controlplane"} {
		kind, name, _ := strings.Cut(want, "/")
		if find(t, nodes, kind, name) == nil {
			t.Errorf("the build lacks %s", want)
		}
	}
	api := str(t, find(t, nodes, "ConfigMap", "controlplane-glance-config-"), "data", "glance-api.conf")
	for _, want := range []string{
		"enabled_backends = controlplane-glance-default:s3,controlplane-glance-secondary:s3\n",
		"default_backend = controlplane-glance-default\n",
		"auth_url = http://controlplane-keystone.openstack.svc:5000/v3\n",
		"memcached_servers = openstack-memcached:11211\n",
	} {
		if !strings.Contains(api, want) {
			t.Errorf("glance-api.conf lacks %q:\n%s", want, api)
		}
	}
	cm1, sec1 := mountedConfig(find(t, nodes, "Deployment", "controlplane-glance"))

	cp := filepath.Join(dir, "controlplane.yaml")
	edit(t, cp, "isDefault: true", "isDefault: TMP")
	edit(t, cp, "isDefault: false", "isDefault: true")
	edit(t, cp, "isDefault: TMP", "isDefault: false")
	cm2, sec2 := mountedConfig(find(t, mustBuild(t, dir), "Deployment", "controlplane-glance"))
	if cm2 == cm1 || sec2 != sec1 {
		t.Errorf("flipping the default in the ControlPlane: ConfigMap %s -> %s (must change), Secret %s -> %s (must not)", cm1, cm2, sec1, sec2)
	}
}
