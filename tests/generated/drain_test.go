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
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/kustomize/kyaml/kio"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/c5c3/glance-krm/internal/testenv"
	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

// The longest names the CRDs allow: a Glance of MaxGlanceNameLength, a
// store of a DNS subdomain's 253 characters (dotted).
var (
	longestGlance = "g" + strings.Repeat("l", v1alpha1.MaxGlanceNameLength-1)
	longestStore  = strings.Repeat(strings.Repeat("s", 62)+".", 4) + "s"
)

// drainExample is examples/generated with a second store, garage, the
// default, and its first store annotated to drain into it.
func drainExample(t *testing.T) string {
	t.Helper()
	return drainExampleNamed(t, "glance", "ceph-rgw")
}

// generatedExample is a copy of examples/generated that runs this build's
// function: the folder, its glance.yaml and what that holds.
func generatedExample(t *testing.T) (dir, glanceYAML string, content []byte) {
	t.Helper()
	dir = t.TempDir()
	fnBin := testenv.FunctionBinary(t)
	testenv.CopyTree(t, filepath.Join(testenv.RepoRoot(), "examples/generated"), dir, func(_ string, b []byte) []byte {
		return bytes.ReplaceAll(b, []byte("../../bin/glance-krm-fn"), []byte(fnBin))
	})
	glanceYAML = filepath.Join(dir, "glance.yaml")
	content, err := os.ReadFile(glanceYAML)
	if err != nil {
		t.Fatal(err)
	}
	return dir, glanceYAML, content
}

// drainExampleNamed is drainExample with the Glance and the leaving store
// named glance and store.
func drainExampleNamed(t *testing.T, glance, store string) string {
	t.Helper()
	dir, f, b := generatedExample(t)
	s := strings.Replace(string(b), "  name: ceph-rgw\n  namespace: openstack\n", "  name: "+store+"\n  namespace: openstack\n  annotations:\n    glance.openstack.c5c3.io/drain-to: garage\n", 1)
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
	s = strings.Replace(s, "kind: Glance\nmetadata:\n  name: glance\n", "kind: Glance\nmetadata:\n  name: "+glance+"\n", 1)
	s = strings.ReplaceAll(s, "  glanceRef:\n    name: glance\n", "  glanceRef:\n    name: "+glance+"\n")
	if s == string(b) || !strings.Contains(s, "drain-to") || strings.Count(s, "name: "+glance+"\n") < 3 {
		t.Fatal("examples/generated/glance.yaml no longer has the Glance and the store this test annotates")
	}
	if err := os.WriteFile(f, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestDrainRecordThroughTheGeneratedRole: on a real API server, with the
// render's ServiceAccount, Role, RoleBinding and record applied, the
// drain's service account (impersonated, and the script with its token,
// as the Job runs it) can get, update and patch its record, and nothing
// else: no other ConfigMap (get, list, create, update, patch, delete), no
// create of any ConfigMap, no delete of its record. The script writes
// the record's data with the Job's name and keeps the render's labels; it
// never creates a missing record, and says what is missing. For the
// example's names and the longest the CRDs allow.
func TestDrainRecordThroughTheGeneratedRole(t *testing.T) {
	for ns, names := range map[string][2]string{"drain-rbac": {"glance", "ceph-rgw"}, "drain-rbac-longest": {longestGlance, longestStore}} {
		t.Run(ns, func(t *testing.T) { drainRecordRBAC(t, ns, names[0], names[1]) })
	}
}

func drainRecordRBAC(t *testing.T, ns, glance, store string) {
	ctx := context.Background()
	kube := kubernetes.NewForConfigOrDie(cfg)
	ensureNamespace(t, kube, ns)
	var script, saName, job string
	record := v1alpha1.DrainRecordName(glance, store)
	nodes, err := (&kio.ByteReader{Reader: strings.NewReader(build(t, drainExampleNamed(t, glance, store))), OmitReaderAnnotations: true}).Read()
	if err != nil {
		t.Fatal(err)
	}
	applied := 0
	for _, n := range nodes {
		b, _ := n.MarshalJSON()
		switch {
		case n.GetKind() == "ServiceAccount":
			var o corev1.ServiceAccount
			mustDecode(t, b, &o)
			o.Namespace, saName = ns, o.Name
			_, err = kube.CoreV1().ServiceAccounts(ns).Create(ctx, &o, metav1.CreateOptions{})
		case n.GetKind() == "Role":
			var o rbacv1.Role
			mustDecode(t, b, &o)
			o.Namespace = ns
			_, err = kube.RbacV1().Roles(ns).Create(ctx, &o, metav1.CreateOptions{})
		case n.GetKind() == "RoleBinding":
			var o rbacv1.RoleBinding
			mustDecode(t, b, &o)
			o.Namespace = ns
			o.Subjects[0].Namespace = ns
			_, err = kube.RbacV1().RoleBindings(ns).Create(ctx, &o, metav1.CreateOptions{})
		case n.GetKind() == "ConfigMap" && n.GetLabels()[v1alpha1.LabelComponent] == v1alpha1.ComponentDrainRecord:
			var o corev1.ConfigMap
			mustDecode(t, b, &o)
			if o.Name != record || o.Data != nil {
				t.Fatalf("the rendered record is %s with data %v, want %s, empty", o.Name, o.Data, record)
			}
			o.Namespace = ns
			_, err = kube.CoreV1().ConfigMaps(ns).Create(ctx, &o, metav1.CreateOptions{})
		case n.GetKind() == "ConfigMap" && n.GetDataMap()["drain.py"] != "":
			script = n.GetDataMap()["drain.py"]
			continue
		case n.GetKind() == "Job" && n.GetAnnotations()[v1alpha1.AnnotationDrainFrom] == store:
			job = n.GetName()
			continue
		default:
			continue
		}
		if err != nil {
			t.Fatalf("applying %s %s: %v", n.GetKind(), n.GetName(), err)
		}
		applied++
	}
	if script == "" || job == "" || applied != 4 {
		t.Fatalf("the render holds no drain script, Job, or not the ServiceAccount, Role, RoleBinding and record (%d applied)", applied)
	}

	// The service account, impersonated.
	as := rest.CopyConfig(cfg)
	as.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:" + ns + ":" + saName,
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"}}
	sa := kubernetes.NewForConfigOrDie(as).CoreV1().ConfigMaps(ns)
	other := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "someone-elses", Namespace: ns}, Data: map[string]string{"k": "v"}}
	if _, err := kube.CoreV1().ConfigMaps(ns).Create(ctx, other, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	got, err := sa.Get(ctx, record, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get of its record: %v", err)
	}
	got.Data = map[string]string{"state": "Running"}
	if _, err := sa.Update(ctx, got, metav1.UpdateOptions{}); err != nil {
		t.Errorf("update of its record: %v", err)
	}
	if _, err := sa.Patch(ctx, record, types.MergePatchType, []byte(`{"data":{"remaining":"3"}}`), metav1.PatchOptions{}); err != nil {
		t.Errorf("patch of its record: %v", err)
	}
	forbidden := map[string]error{}
	_, forbidden["get another"] = sa.Get(ctx, other.Name, metav1.GetOptions{})
	_, forbidden["list"] = sa.List(ctx, metav1.ListOptions{})
	_, forbidden["update another"] = sa.Update(ctx, other, metav1.UpdateOptions{})
	_, forbidden["patch another"] = sa.Patch(ctx, other.Name, types.MergePatchType, []byte(`{"data":{"k":"x"}}`), metav1.PatchOptions{})
	forbidden["delete another"] = sa.Delete(ctx, other.Name, metav1.DeleteOptions{})
	forbidden["delete its record"] = sa.Delete(ctx, record, metav1.DeleteOptions{})
	_, forbidden["create another"] = sa.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "new-one"}}, metav1.CreateOptions{})
	_, forbidden["create with its record's name"] = sa.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: record}}, metav1.CreateOptions{})
	for what, err := range forbidden {
		if !apierrors.IsForbidden(err) {
			t.Errorf("%s as the drain's service account: %v, want Forbidden", what, err)
		}
	}
	if o, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, other.Name, metav1.GetOptions{}); err != nil || o.Data["k"] != "v" {
		t.Errorf("another ConfigMap changed: %v %v", o, err)
	}

	// The script, with the service account's token, as the Job runs it.
	tok, err := kube.CoreV1().ServiceAccounts(ns).CreateToken(ctx, saName, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for name, content := range map[string]string{"token": tok.Status.Token, "namespace": ns, "ca.crt": string(cfg.CAData), "drain.py": script} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	u, err := url.Parse(cfg.Host)
	if err != nil {
		t.Fatal(err)
	}
	python := func(code string, args ...string) (string, error) {
		cmd := exec.Command("/usr/bin/python3", append([]string{"-c", "import sys; sys.path.insert(0, sys.argv[1]); import drain\n" + code, dir}, args...)...)
		cmd.Env = append(os.Environ(), "KUBERNETES_SERVICE_HOST="+u.Hostname(), "KUBERNETES_SERVICE_PORT="+u.Port(),
			"GLANCE_KRM_SERVICEACCOUNT_DIR="+dir, "GLANCE_KRM_GLANCE="+glance)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	save := `drain.save_configmap(sys.argv[2], {"from": sys.argv[3], "to": "garage", "state": sys.argv[4], "remaining": "0", "job": sys.argv[5], "record.json": "{}"})`
	for _, state := range []string{"Running", "Complete"} {
		if out, err := python("drain.wait_configmap(sys.argv[2], 5)\n"+save, record, store, state, job); err != nil {
			t.Fatalf("writing the record (%s) as the drain's service account: %v\n%s", state, err, out)
		}
		cm, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, record, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if cm.Data["state"] != state || cm.Data["job"] != job || cm.Data["from"] != store || cm.Labels[v1alpha1.LabelComponent] != v1alpha1.ComponentDrainRecord ||
			cm.Labels[v1alpha1.LabelGlance] != glance || cm.Labels[v1alpha1.LabelManagedBy] != v1alpha1.ManagedByGlanceKRM {
			t.Errorf("the record after %s: %v %v", state, cm.Labels, cm.Data)
		}
	}
	if out, err := python(save, other.Name, store, "Complete", job); err == nil || !strings.Contains(out, ": 403 ") {
		t.Errorf("the drain's service account overwrote another ConfigMap (err %v)\n%s", err, out)
	}
	// A missing record: waited for, never created, and named.
	if err := kube.CoreV1().ConfigMaps(ns).Delete(ctx, record, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	out, err := python("drain.wait_configmap(sys.argv[2], 3)", record)
	if err == nil || !strings.Contains(out, "the rendered record ConfigMap "+ns+"/"+record+" must be applied with the Job") {
		t.Errorf("a missing record: err %v, want an exit saying the rendered record must be applied\n%s", err, out)
	}
	if out, err := python(save, record, store, "Complete", job); err == nil || !strings.Contains(out, ": 403 ") && !strings.Contains(out, ": 404 ") {
		t.Errorf("writing a missing record: err %v, want a refusal\n%s", err, out)
	}
	if _, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, record, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the script created the record: %v", err)
	}
}

func mustDecode(t *testing.T, b []byte, into any) {
	t.Helper()
	if err := sigsyaml.Unmarshal(b, into); err != nil {
		t.Fatal(err)
	}
}
