package generated_test

import (
	"bytes"
	"context"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/kustomize/kyaml/kio"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/c5c3/glance-krm/internal/testenv"
	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

// drainExample is examples/generated with a second store, garage, and
// its first store annotated to drain into it.
func drainExample(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	fnBin := testenv.FunctionBinary(t)
	testenv.CopyTree(t, filepath.Join(testenv.RepoRoot(), "examples/generated"), dir, func(_ string, b []byte) []byte {
		return bytes.ReplaceAll(b, []byte("../../bin/glance-krm-fn"), []byte(fnBin))
	})
	f := filepath.Join(dir, "glance.yaml")
	b, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Replace(string(b), "  name: ceph-rgw\n  namespace: openstack\n", "  name: ceph-rgw\n  namespace: openstack\n  annotations:\n    glance.openstack.c5c3.io/drain-to: garage\n", 1)
	s = strings.Replace(s, "  isDefault: true\n", "  isDefault: false\n", 1)
	s += `---
apiVersion: glance.openstack.c5c3.io/v1alpha1
kind: GlanceBackend
metadata:
  name: garage
  namespace: openstack
spec:
  glanceRef:
    name: glance
  type: S3
  isDefault: true
  s3:
    host: http://garage.storage.svc:3900
    bucket: glance
    credentialsSecretRef:
      name: garage-s3-credentials
`
	if s == string(b) || !strings.Contains(s, "drain-to") {
		t.Fatal("examples/generated/glance.yaml no longer has the store this test annotates")
	}
	if err := os.WriteFile(f, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestDrainRecordThroughTheGeneratedRole: the drain script's record
// write (save_configmap, as the Job runs it) on a real API server, as the
// generated ServiceAccount with its generated Role: the record is created,
// then updated; another ConfigMap cannot be overwritten.
func TestDrainRecordThroughTheGeneratedRole(t *testing.T) {
	ctx := context.Background()
	kube := kubernetes.NewForConfigOrDie(cfg)
	const ns = "drain-rbac"
	ensureNamespace(t, kube, ns)
	var script string
	nodes, err := (&kio.ByteReader{Reader: strings.NewReader(build(t, drainExample(t))), OmitReaderAnnotations: true}).Read()
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		b, _ := n.MarshalJSON()
		switch n.GetKind() {
		case "ServiceAccount":
			var o corev1.ServiceAccount
			mustDecode(t, b, &o)
			o.Namespace = ns
			if _, err := kube.CoreV1().ServiceAccounts(ns).Create(ctx, &o, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		case "Role":
			var o rbacv1.Role
			mustDecode(t, b, &o)
			o.Namespace = ns
			if _, err := kube.RbacV1().Roles(ns).Create(ctx, &o, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		case "RoleBinding":
			var o rbacv1.RoleBinding
			mustDecode(t, b, &o)
			o.Namespace = ns
			o.Subjects[0].Namespace = ns
			if _, err := kube.RbacV1().RoleBindings(ns).Create(ctx, &o, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		case "ConfigMap":
			if d := n.GetDataMap()["drain.py"]; d != "" {
				script = d
			}
		}
	}
	if script == "" {
		t.Fatal("the render holds no drain script")
	}
	tok, err := kube.CoreV1().ServiceAccounts(ns).CreateToken(ctx, "glance-store-drain", &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sa := t.TempDir()
	for name, content := range map[string]string{"token": tok.Status.Token, "namespace": ns, "ca.crt": string(cfg.CAData), "drain.py": script} {
		if err := os.WriteFile(filepath.Join(sa, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	u, err := url.Parse(cfg.Host)
	if err != nil {
		t.Fatal(err)
	}
	host, port := u.Hostname(), u.Port()
	save := func(name, state string) (string, error) {
		cmd := exec.Command("/usr/bin/python3", "-c", `import sys; sys.path.insert(0, sys.argv[1]); import drain
drain.save_configmap(sys.argv[2], {"from": "ceph-rgw", "to": "garage", "state": sys.argv[3], "remaining": "0", "record.json": "{}"})`, sa, name, state)
		cmd.Env = append(os.Environ(), "KUBERNETES_SERVICE_HOST="+host, "KUBERNETES_SERVICE_PORT="+port,
			"GLANCE_KRM_SERVICEACCOUNT_DIR="+sa, "GLANCE_KRM_GLANCE=glance")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	record := v1alpha1.DrainRecordName("glance", "ceph-rgw")
	for _, state := range []string{"Running", "Complete"} { // created, then updated
		if out, err := save(record, state); err != nil {
			t.Fatalf("writing the record (%s) as the drain's service account: %v\n%s", state, err, out)
		}
		cm, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, record, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if cm.Data["state"] != state || cm.Labels[v1alpha1.LabelComponent] != v1alpha1.ComponentDrainRecord || cm.Labels[v1alpha1.LabelGlance] != "glance" {
			t.Errorf("the record after %s: %v %v", state, cm.Labels, cm.Data)
		}
	}
	other := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "someone-elses", Namespace: ns}, Data: map[string]string{"k": "v"}}
	if _, err := kube.CoreV1().ConfigMaps(ns).Create(ctx, other, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if out, err := save("someone-elses", "Complete"); err == nil || !strings.Contains(out, ": 403 ") {
		t.Errorf("the drain's service account overwrote another ConfigMap (err %v)\n%s", err, out)
	}
}

func mustDecode(t *testing.T, b []byte, into any) {
	t.Helper()
	if err := sigsyaml.Unmarshal(b, into); err != nil {
		t.Fatal(err)
	}
}
