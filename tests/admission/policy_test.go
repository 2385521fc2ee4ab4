// Package admission_test holds examples/argocd/clusterimagepolicy.yaml,
// the admission policy that refuses an unsigned glance-krm image, to the
// peer that runs it: sigstore policy-controller's own ClusterImagePolicy
// CRD (hack/policy-controller-crd.sh, at POLICY_CONTROLLER_VERSION) on a
// real kube-apiserver, and to the release that signs (the workflow's
// identity, the images it pushes, docs/doors.md's verify commands).
package admission_test

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/c5c3/glance-krm/internal/testenv"
)

const crdEnv = "POLICY_CONTROLLER_CRD"

var (
	cfg      *rest.Config
	policies = schema.GroupVersionResource{Group: "policy.sigstore.dev", Version: "v1beta1", Resource: "clusterimagepolicies"}
)

func TestMain(m *testing.M) {
	if !testenv.MainNeeds(crdEnv, "make unit") {
		os.Exit(0)
	}
	testenv.APIServerMain(m, func(_ *envtest.Environment, c *rest.Config) { cfg = c }, func() (func(*envtest.Environment), error) {
		crd, err := policyCRD(os.Getenv(crdEnv))
		if err != nil {
			return nil, err
		}
		return func(env *envtest.Environment) { env.CRDs = append(env.CRDs, crd) }, nil
	})
}

// policyCRD is policy-controller's CRD as it ships, but for its
// conversion: policy-controller's own webhook converts between v1alpha1
// (stored) and v1beta1, and no webhook runs here. The API server prunes
// and validates a create against the schema of the version it is sent
// as, before any conversion, so the check is the same.
func policyCRD(file string) (*apiextensionsv1.CustomResourceDefinition, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := sigsyaml.Unmarshal(b, crd); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	crd.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.NoneConverter}
	return crd, nil
}

func readPolicy(t *testing.T) *unstructured.Unstructured {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "examples", "argocd", "clusterimagepolicy.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := sigsyaml.Unmarshal(b, &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

// acceptedAsWritten creates the policy and reads it back: a field the
// schema does not know is pruned (a misspelled one is silently dropped,
// so the policy would not say what it reads as), a wrong one refused.
func acceptedAsWritten(t *testing.T, u *unstructured.Unstructured) error {
	t.Helper()
	client := dynamic.NewForConfigOrDie(cfg).Resource(policies)
	ctx := context.Background()
	created, err := client.Create(ctx, u.DeepCopy(), metav1.CreateOptions{FieldValidation: "Ignore"})
	if err != nil {
		return err
	}
	t.Cleanup(func() { _ = client.Delete(ctx, created.GetName(), metav1.DeleteOptions{}) })
	got, err := client.Get(ctx, created.GetName(), metav1.GetOptions{})
	if err != nil {
		return err
	}
	if !reflect.DeepEqual(got.Object["spec"], u.Object["spec"]) {
		return fmt.Errorf("the API server kept a different spec (a field pruned):\n got %v\nwant %v", got.Object["spec"], u.Object["spec"])
	}
	return nil
}

func TestThePolicyIsAcceptedAsWritten(t *testing.T) {
	if err := acceptedAsWritten(t, readPolicy(t)); err != nil {
		t.Fatal(err)
	}
}

// The check above fails for a policy that does not say what it reads as.
func TestTheCheckRefusesABrokenPolicy(t *testing.T) {
	for name, breakIt := range map[string]func(spec map[string]any){
		"a misspelled field (pruned)": func(spec map[string]any) {
			a := spec["authorities"].([]any)[0].(map[string]any)
			a["keyles"] = a["keyless"]
			delete(a, "keyless")
		},
		"a field of the wrong type (refused)": func(spec map[string]any) { spec["images"] = "ghcr.io/c5c3/glance-krm-*" },
	} {
		t.Run(name, func(t *testing.T) {
			u := readPolicy(t)
			u.SetName(strings.NewReplacer(" ", "-", "(", "", ")", "").Replace(name))
			breakIt(u.Object["spec"].(map[string]any))
			err := acceptedAsWritten(t, u)
			if err == nil {
				t.Fatal("accepted as written")
			}
			t.Log(err)
		})
	}
}

// Every image the release pushes (a stage of the top-level Dockerfile,
// ghcr.io/c5c3/glance-krm-<stage>, pinned by digest) falls under the
// policy's glob, matched as policy-controller matches it (a * never
// crosses a "/", the whole reference with its digest); nothing else
// under ghcr.io/c5c3 does.
func TestThePolicyCoversEveryReleasedImage(t *testing.T) {
	root := testenv.RepoRoot()
	glob := readPolicy(t).Object["spec"].(map[string]any)["images"].([]any)[0].(map[string]any)["glob"].(string)
	workflow, err := os.ReadFile(filepath.Join(root, ".github", "workflows", "release.yml"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(workflow), "ghcr.io/c5c3") {
		t.Fatal("the release workflow no longer pushes to ghcr.io/c5c3: the policy's glob must follow it")
	}
	dockerfile, err := os.ReadFile(filepath.Join(root, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	stages := regexp.MustCompile(`(?m)^FROM scratch AS (\S+)$`).FindAllStringSubmatch(string(dockerfile), -1)
	if len(stages) < 3 {
		t.Fatalf("the Dockerfile names %d stages", len(stages))
	}
	digest := "@sha256:" + strings.Repeat("0123456789abcdef", 4)
	match := func(ref string) bool {
		ok, err := path.Match(glob, ref)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	for _, s := range stages {
		if ref := "ghcr.io/c5c3/glance-krm-" + s[1] + digest; !match(ref) {
			t.Errorf("the policy's glob %q misses %s", glob, ref)
		}
	}
	for _, ref := range []string{"ghcr.io/c5c3/keystone" + digest, "ghcr.io/c5c3/glance-krm-fn/other" + digest, "ghcr.io/other/glance-krm-fn" + digest} {
		if match(ref) {
			t.Errorf("the policy's glob %q also takes %s", glob, ref)
		}
	}
}

// The identity the policy admits is the one docs/doors.md tells a user to
// verify with cosign: the release workflow on a v* tag, nothing else.
func TestThePolicyAdmitsTheReleaseIdentityAlone(t *testing.T) {
	spec := readPolicy(t).Object["spec"].(map[string]any)
	authority := spec["authorities"].([]any)[0].(map[string]any)
	if authority["signatureFormat"] != "bundle" {
		t.Errorf("signatureFormat %v: cosign v3 (hack/release.sh) attaches sigstore bundles, which policy-controller reads only with signatureFormat: bundle", authority["signatureFormat"])
	}
	id := authority["keyless"].(map[string]any)["identities"].([]any)[0].(map[string]any)
	subject := regexp.MustCompile(id["subjectRegExp"].(string))
	doors, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "docs", "doors.md"))
	if err != nil {
		t.Fatal(err)
	}
	documented := func(name string) string {
		m := regexp.MustCompile(`(?m)^` + name + `=(\S+)$`).FindStringSubmatch(string(doors))
		if m == nil {
			t.Fatalf("docs/doors.md sets no %s= for cosign verify", name)
		}
		return m[1]
	}
	if issuer := documented("ISSUER"); id["issuer"] != issuer {
		t.Errorf("the policy's issuer %v, docs/doors.md verifies with %s", id["issuer"], issuer)
	}
	release := documented("ID")
	if _, err := os.Stat(filepath.Join(testenv.RepoRoot(), strings.SplitN(strings.TrimPrefix(release, "https://github.com/c5c3/glance-krm/"), "@", 2)[0])); err != nil {
		t.Errorf("docs/doors.md's identity %s names no workflow in the repository: %v", release, err)
	}
	if !subject.MatchString(release) {
		t.Errorf("the policy's subjectRegExp %s refuses the release identity %s", subject, release)
	}
	for _, other := range []string{
		strings.Replace(release, "refs/tags/v0.1.0", "refs/heads/main", 1),
		strings.Replace(release, "release.yml", "ci.yml", 1),
		strings.Replace(release, "c5c3/glance-krm", "someone/glance-krm", 1),
		release + "/x",
	} {
		if subject.MatchString(other) {
			t.Errorf("the policy's subjectRegExp %s admits %s", subject, other)
		}
	}
}
