// Package generated_test checks the objects glance-krm generates from a
// Glance on a real kube-apiserver: each passes a server-side dry-run
// create (Gateway API's HTTPRoute with the CRD from the Go module that
// ships it), in namespaces that warn on anything the restricted Pod
// Security profile forbids.
package generated_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	"sigs.k8s.io/kustomize/kyaml/kio"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/c5c3/glance-krm/internal/testenv"
	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

var cfg *rest.Config

func TestMain(m *testing.M) {
	testenv.APIServerMain(m, func(_ *envtest.Environment, c *rest.Config) { cfg = c }, func() (func(*envtest.Environment), error) {
		crd, err := testenv.GatewayAPICRD()
		if err != nil {
			return nil, fmt.Errorf("finding Gateway API's HTTPRoute CRD: %w", err)
		}
		vpa, err := testenv.VPACRD()
		if err != nil {
			return nil, fmt.Errorf("finding the autoscaler's VerticalPodAutoscaler CRD: %w", err)
		}
		return func(env *envtest.Environment) { env.CRDDirectoryPaths = append(env.CRDDirectoryPaths, crd, vpa) }, nil
	})
}

// warnings collects the API server's warnings (Pod Security among them).
type warnings struct {
	mu   sync.Mutex
	text []string
}

func (w *warnings) HandleWarningHeader(_ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.text = append(w.text, text)
}

func (w *warnings) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.text
	w.text = nil
	return out
}

// renders are what the tests dry-run: the examples that generate a
// workload, built by real kustomize, and every seed render case, whose
// Glances cover each field group of the seed's Glance.
func renders(t *testing.T) map[string]string {
	t.Helper()
	root := testenv.RepoRoot()
	fnBin := testenv.FunctionBinary(t)
	out := map[string]string{}
	dirs := []string{"examples/generated"}
	steps, _ := filepath.Glob(filepath.Join(root, "examples/several-apis/[0-9]-*"))
	for _, s := range steps {
		dirs = append(dirs, strings.TrimPrefix(s, root+"/"))
	}
	for _, d := range dirs {
		out[d] = build(t, filepath.Join(root, d))
	}
	out["examples/generated with a store drain"] = build(t, drainExample(t))
	out["examples/generated with a VPA and node placement"] = build(t, vpaExample(t))
	out["examples/generated with a store drain, the longest names"] = build(t, drainExampleNamed(t, longestGlance, longestStore))
	cases, _ := filepath.Glob(filepath.Join(root, "krm/testdata/seed/render/*/input.yaml"))
	for _, c := range cases {
		raw, err := os.ReadFile(c)
		if err != nil {
			t.Fatal(err)
		}
		nodes, err := (&kio.ByteReader{Reader: bytes.NewReader(raw), OmitReaderAnnotations: true}).Read()
		if err != nil {
			t.Fatal(err)
		}
		var rl bytes.Buffer
		if err := (kio.ByteWriter{Writer: &rl, WrappingKind: kio.ResourceListKind, WrappingAPIVersion: kio.ResourceListAPIVersion}).Write(nodes); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(fnBin)
		cmd.Stdin = &rl
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s: the function failed: %v\n%s\n%s", c, err, stderr.String(), stdout.String())
		}
		items, err := (&kio.ByteReader{Reader: &stdout}).Read()
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := (kio.ByteWriter{Writer: &b}).Write(items); err != nil {
			t.Fatal(err)
		}
		out[strings.TrimPrefix(filepath.Dir(c), root+"/")] = b.String()
	}
	return out
}

// vpaExample is examples/generated with the seed's newer DeploymentSpec:
// a VerticalPodAutoscaler in place of the HPA, and node placement.
func vpaExample(t *testing.T) string {
	t.Helper()
	dir, f, b := generatedExample(t)
	hpa := "  autoscaling:\n    minReplicas: 2\n    maxReplicas: 6\n    targetCPUUtilization: 70\n"
	if !bytes.Contains(b, []byte(hpa)) {
		t.Fatal("examples/generated/glance.yaml no longer holds the autoscaling block this test replaces")
	}
	s := strings.Replace(string(b), hpa, "", 1)
	s = strings.Replace(s, "  deployment:\n    replicas: 2\n", `  deployment:
    replicas: 2
    nodeSelector: {kubernetes.io/os: linux}
    tolerations: [{key: dedicated, operator: Equal, value: glance, effect: NoSchedule}]
    affinity:
      nodeAffinity:
        requiredDuringSchedulingIgnoredDuringExecution:
          nodeSelectorTerms: [{matchExpressions: [{key: kubernetes.io/arch, operator: In, values: [amd64, arm64]}]}]
    verticalAutoscaling:
      updateMode: Recreate
      minReplicas: 2
      minAllowed: {cpu: 50m, memory: 512Mi}
      maxAllowed: {cpu: "2", memory: 8Gi}
`, 1)
	if err := os.WriteFile(f, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

// build is the real kustomize with the function on a folder.
func build(t *testing.T, dir string) string {
	t.Helper()
	cmd := exec.Command(testenv.Kustomize(t), "build", "--enable-alpha-plugins", "--enable-exec", dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	b, err := cmd.Output()
	if err != nil {
		t.Fatalf("kustomize build %s: %v\n%s", dir, err, stderr.String())
	}
	return string(b)
}

// TestGeneratedObjectsPassDryRun creates every object of every render
// with a server-side dry run, and fails on a refusal or a warning.
func TestGeneratedObjectsPassDryRun(t *testing.T) {
	w := &warnings{}
	c := rest.CopyConfig(cfg)
	c.WarningHandler = w
	dyn := dynamic.NewForConfigOrDie(c)
	kube := kubernetes.NewForConfigOrDie(c)
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(discovery.NewDiscoveryClientForConfigOrDie(c)))
	ctx := context.Background()
	kinds := map[string]int{}
	for name, out := range renders(t) {
		t.Run(name, func(t *testing.T) {
			nodes, err := (&kio.ByteReader{Reader: strings.NewReader(out), OmitReaderAnnotations: true}).Read()
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range nodes {
				if c := n.GetLabels()[v1alpha1.LabelComponent]; c != v1alpha1.ComponentWorkload && c != v1alpha1.ComponentDrainRecord {
					continue
				}
				kinds[n.GetKind()]++
				m, err := n.Map()
				if err != nil {
					t.Fatal(err)
				}
				u := &unstructured.Unstructured{Object: m}
				ns := u.GetNamespace()
				if ns == "" {
					ns = "default"
					u.SetNamespace(ns)
				}
				ensureNamespace(t, kube, ns)
				if u.GetKind() == "HTTPRoute" {
					b, _ := n.MarshalJSON()
					var route gatewayv1.HTTPRoute
					if err := sigsyaml.UnmarshalStrict(b, &route); err != nil {
						t.Errorf("HTTPRoute %s does not decode into Gateway API's Go type: %v", u.GetName(), err)
					}
				}
				gvk := u.GroupVersionKind()
				mapping, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
				if err != nil {
					t.Fatalf("%s: %v", gvk, err)
				}
				created, err := dyn.Resource(mapping.Resource).Namespace(ns).Create(ctx, u, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}, FieldValidation: "Strict"})
				if err != nil {
					t.Errorf("%s %s: the API server refused it: %v", u.GetKind(), u.GetName(), err)
				} else {
					noDefaultsAdded(t, u, created)
				}
				for _, warning := range w.take() {
					t.Errorf("%s %s: the API server warned: %s", u.GetKind(), u.GetName(), warning)
				}
			}
		})
	}
	for _, k := range []string{"Deployment", "Service", "PodDisruptionBudget", "HorizontalPodAutoscaler", "VerticalPodAutoscaler", "NetworkPolicy", "HTTPRoute", "Job", "CronJob",
		"ConfigMap", "ServiceAccount", "Role", "RoleBinding"} {
		if kinds[k] == 0 {
			t.Errorf("no render generated a %s: the dry run does not cover it", k)
		}
	}
	t.Logf("dry-run created: %v", kinds)
}

// builtinGroups are the API groups of the kinds the function generates
// that Argo CD diffs with their Go types (it knows their defaults).
var builtinGroups = map[string]bool{"": true, "apps": true, "batch": true, "policy": true, "autoscaling": true,
	"networking.k8s.io": true, "rbac.authorization.k8s.io": true}

// noDefaultsAdded fails when the API server added a default to the spec of
// a custom resource (Gateway API's HTTPRoute): Argo CD compares a custom
// resource's lists as wholes, so a default written into a list item on the
// live object (a backendRef's weight, a parentRef's group) is drift it
// reports as OutOfSync after every sync; the function writes them itself.
func noDefaultsAdded(t *testing.T, rendered, created *unstructured.Unstructured) {
	t.Helper()
	if builtinGroups[rendered.GroupVersionKind().Group] {
		return
	}
	// Both as JSON reads them (YAML's ints and the API's int64s apart).
	asJSON := func(v any) any {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var out any
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	if want, got := asJSON(rendered.Object["spec"]), asJSON(created.Object["spec"]); !equality.Semantic.DeepEqual(want, got) {
		t.Errorf("%s %s: the API server defaulted its spec, which Argo CD reports as drift:\nrendered: %v\ncreated:  %v", rendered.GetKind(), rendered.GetName(), want, got)
	}
}

var namespaces sync.Map

// ensureNamespace creates a namespace that warns on every pod template
// the restricted Pod Security profile would refuse.
func ensureNamespace(t *testing.T, kube kubernetes.Interface, name string) {
	t.Helper()
	if _, done := namespaces.LoadOrStore(name, true); done {
		return
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
		"pod-security.kubernetes.io/enforce": "restricted", "pod-security.kubernetes.io/warn": "restricted",
	}}}
	if _, err := kube.CoreV1().Namespaces().Create(context.Background(), ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		if name != "default" {
			t.Fatal(err)
		}
	}
	if name == "default" {
		got, err := kube.CoreV1().Namespaces().Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		got.Labels = ns.Labels
		if _, err := kube.CoreV1().Namespaces().Update(context.Background(), got, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}
