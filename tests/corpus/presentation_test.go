package corpus_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	"github.com/c5c3/glance-krm/krm/crds"
	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

// TestPrinterColumns reads `kubectl get glancebackends` as the API server
// serves it (the Table form kubectl asks for): the contract's columns, and
// the values of a ready default backend and a pending other one.
func TestPrinterColumns(t *testing.T) {
	ctx := context.Background()
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ns := "printer-columns"
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	for _, b := range []struct {
		name      string
		isDefault bool
		ready     metav1.ConditionStatus
	}{{"garage-a", true, metav1.ConditionTrue}, {"garage-b", false, metav1.ConditionFalse}} {
		gb := &v1alpha1.GlanceBackend{
			ObjectMeta: metav1.ObjectMeta{Name: b.name, Namespace: ns},
			Spec: v1alpha1.GlanceBackendSpec{
				GlanceRef: v1alpha1.GlanceRefSpec{Name: "glance-multistore"}, Type: v1alpha1.GlanceBackendTypeS3, IsDefault: b.isDefault,
				S3: &v1alpha1.S3BackendSpec{Host: "http://garage:3900", Bucket: "glance-images",
					CredentialsSecretRef: v1alpha1.SecretNameRefSpec{Name: "garage-s3-credentials"}},
			},
		}
		if err := c.Create(ctx, toUnstructured(t, gb)); err != nil {
			t.Fatal(err)
		}
		meta.SetStatusCondition(&gb.Status.Conditions, metav1.Condition{Type: v1alpha1.ConditionReady, Status: b.ready, Reason: "Test"})
		u := toUnstructured(t, gb)
		if err := c.Get(ctx, client.ObjectKeyFromObject(u), u); err != nil {
			t.Fatal(err)
		}
		u.Object["status"] = toUnstructured(t, gb).Object["status"]
		if err := c.Status().Update(ctx, u); err != nil {
			t.Fatal(err)
		}
	}

	cs := kubernetes.NewForConfigOrDie(cfg)
	raw, err := cs.RESTClient().Get().AbsPath("/apis", v1alpha1.Group, v1alpha1.Version, "namespaces", ns, "glancebackends").
		SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").DoRaw(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var table metav1.Table
	if err := json.Unmarshal(raw, &table); err != nil {
		t.Fatal(err)
	}
	var cols []string
	for _, c := range table.ColumnDefinitions {
		cols = append(cols, c.Name)
	}
	if got, want := strings.Join(cols, " "), "Name Ready Type Default Glance Age"; got != want {
		t.Errorf("columns %q, want %q", got, want)
	}
	var rows []string
	for _, r := range table.Rows {
		var cells []string
		for _, cell := range r.Cells[:5] {
			b, _ := json.Marshal(cell)
			cells = append(cells, strings.Trim(string(b), `"`))
		}
		rows = append(rows, strings.Join(cells, " "))
	}
	want := "garage-a True S3 true glance-multistore|garage-b False S3 false glance-multistore"
	if got := strings.Join(rows, "|"); got != want {
		t.Errorf("rows %q, want %q", got, want)
	}
}

// TestExplainDescribesEveryField runs the real kubectl explain against the
// API server: every field of spec.s3 shows its description.
func TestExplainDescribesEveryField(t *testing.T) {
	kubectl := filepath.Join(os.Getenv("KUBEBUILDER_ASSETS"), "kubectl")
	if _, err := os.Stat(kubectl); err != nil {
		t.Fatalf("kubectl is not beside kube-apiserver in KUBEBUILDER_ASSETS: %v", err)
	}
	user, err := testEnv.AddUser(envtest.User{Name: "explainer", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig, err := user.KubeConfig()
	if err != nil {
		t.Fatal(err)
	}
	kcfg := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kcfg, kubeconfig, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(kubectl, "--kubeconfig", kcfg, "explain", "glancebackend.spec.s3").CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl explain: %v\n%s", err, out)
	}
	explained := strings.Join(strings.Fields(string(out)), " ")

	raw, err := crds.FS.ReadFile("glance.openstack.c5c3.io_glancebackends.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.Unmarshal(raw, &crd); err != nil {
		t.Fatal(err)
	}
	s3 := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties["s3"]
	if len(s3.Properties) < 8 {
		t.Fatalf("spec.s3 has %d fields in the CRD", len(s3.Properties))
	}
	for name, p := range s3.Properties {
		desc := strings.Join(strings.Fields(p.Description), " ")
		if desc == "" {
			t.Errorf("spec.s3.%s has no description in the CRD", name)
			continue
		}
		if !strings.Contains(explained, name+" <") || !strings.Contains(explained, desc[:min(len(desc), 40)]) {
			t.Errorf("kubectl explain does not show spec.s3.%s with its description %q", name, desc)
		}
	}
	if strings.Contains(explained, "<empty>") {
		t.Errorf("kubectl explain shows an empty description:\n%s", out)
	}
}
