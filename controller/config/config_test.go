// Package config_test checks the controller's committed manifests: the
// RBAC is what the reconcilers' markers generate and no more than they
// need, and the Deployment runs under the restricted Pod Security profile.
package config_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/c5c3/glance-krm/internal/testenv"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/yaml"
)

func TestRBACIsCurrent(t *testing.T) {
	bin := testenv.Env(t, "CONTROLLER_GEN_BIN", "make unit")
	dir := t.TempDir()
	cmd := exec.Command(bin, "rbac:roleName=glance-krm-controller", "paths=./controller/...", "output:rbac:artifacts:config="+dir)
	cmd.Dir = "../.."
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("controller-gen: %v\n%s", err, out)
	}
	want, _ := os.ReadFile(filepath.Join(dir, "role.yaml"))
	got, _ := os.ReadFile("rbac/role.yaml")
	if !bytes.Equal(want, got) {
		t.Error("controller/config/rbac/role.yaml is stale: run `make generate` and commit the result")
	}
}

// TestLeastPrivilege: reads on what the reconcilers read, update on the
// two status subresources, create/patch on events, the leader-election
// Lease in the controller's namespace. Nothing else.
func TestLeastPrivilege(t *testing.T) {
	raw, err := os.ReadFile("rbac/role.yaml")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, doc := range strings.Split(string(raw), "\n---\n") {
		var role rbacv1.ClusterRole // a Role has the same shape
		if err := yaml.Unmarshal([]byte(doc), &role); err != nil {
			t.Fatal(err)
		}
		for _, r := range role.Rules {
			for _, g := range r.APIGroups {
				for _, res := range r.Resources {
					verbs := append([]string(nil), r.Verbs...)
					sort.Strings(verbs)
					got[role.Kind+" "+g+"/"+res] = strings.Join(verbs, ",")
				}
			}
		}
	}
	want := map[string]string{
		"ClusterRole /configmaps":                                    "get,list,watch",
		"ClusterRole /secrets":                                       "get,list,watch",
		"ClusterRole apps/deployments":                               "get,list,watch",
		"ClusterRole batch/jobs":                                     "get,list,watch",
		"ClusterRole events.k8s.io/events":                           "create,patch",
		"ClusterRole glance.openstack.c5c3.io/glances":               "get,list,watch",
		"ClusterRole glance.openstack.c5c3.io/glancebackends":        "get,list,watch",
		"ClusterRole glance.openstack.c5c3.io/glances/status":        "patch",
		"ClusterRole glance.openstack.c5c3.io/glancebackends/status": "patch",
		"Role coordination.k8s.io/leases":                            "create,get,update",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("RBAC (-want +got):\n%s", diff)
	}
}

func TestDeploymentIsRestricted(t *testing.T) {
	bin := testenv.Kustomize(t)
	out, err := exec.Command(bin, "build", ".").Output()
	if err != nil {
		t.Fatalf("kustomize build controller/config: %v", err)
	}
	nodes, err := (&kio.ByteReader{Reader: bytes.NewReader(out)}).Read()
	if err != nil {
		t.Fatal(err)
	}
	var d *appsv1.Deployment
	for _, n := range nodes {
		if n.GetKind() == "Deployment" {
			s, _ := n.String()
			d = &appsv1.Deployment{}
			if err := yaml.Unmarshal([]byte(s), d); err != nil {
				t.Fatal(err)
			}
		}
	}
	if d == nil {
		t.Fatal("no Deployment")
	}
	pod := d.Spec.Template.Spec
	if pod.SecurityContext == nil || pod.SecurityContext.RunAsNonRoot == nil || !*pod.SecurityContext.RunAsNonRoot ||
		pod.SecurityContext.SeccompProfile == nil || pod.SecurityContext.SeccompProfile.Type != "RuntimeDefault" {
		t.Errorf("pod securityContext is not restricted: %+v", pod.SecurityContext)
	}
	for _, c := range pod.Containers {
		sc := c.SecurityContext
		if sc == nil || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation ||
			sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem ||
			sc.Capabilities == nil || len(sc.Capabilities.Drop) != 1 || sc.Capabilities.Drop[0] != "ALL" {
			t.Errorf("container %s securityContext is not restricted: %+v", c.Name, sc)
		}
		if !strings.Contains(strings.Join(c.Args, " "), "--leader-elect") {
			t.Errorf("container %s does not elect a leader", c.Name)
		}
		if c.LivenessProbe == nil || c.ReadinessProbe == nil {
			t.Errorf("container %s lacks /healthz or /readyz probes", c.Name)
		}
	}
}
