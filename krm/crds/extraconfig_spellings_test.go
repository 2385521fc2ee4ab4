package crds

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"

	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

// A Glance on a release without an option catalog, where no release rule
// stands behind the owned-option and secret-option rules.
const spellingGlance = `{"apiVersion": "glance.openstack.c5c3.io/v1alpha1", "kind": "Glance",
 "metadata": {"name": "glance", "namespace": "ns"},
 "spec": {"openStackRelease": "2024.2", "image": {"repository": "ghcr.io/c5c3/glance", "tag": "2024.2"},
  "database": {"clusterRef": {"name": "mariadb"}, "database": "glance", "secretRef": {"name": "glance-db"}},
  "cache": {"servers": ["memcached:11211"]}, "keystoneEndpoint": "http://keystone:5000/v3",
  "serviceUser": {"secretRef": {"name": "glance-service-user"}}}}`

// signatureVerificationOptions are the options
// spec.imageSignatureVerification renders while enabled
// (fn/glancekrm/render/apiconf.go), which a CEL rule on spec refuses in
// extraConfig then.
var signatureVerificationOptions = []v1alpha1.ConfigOption{
	{Section: "key_manager", Key: "backend"}, {Section: "barbican", Key: "auth_endpoint"}, {Section: "barbican", Key: "barbican_endpoint_type"},
}

var (
	extraConfigOnce sync.Once
	extraConfigCEL  *cel.Validator
	extraConfigSch  *schema.Structural
	extraConfigErr  error
)

// extraConfigRules compiles the CEL rules of spec.extraConfig with the API
// server's code, as the API server does; the function's validator (For)
// leaves them to their hand-written twins, which this test holds them to.
func extraConfigRules(t *testing.T) (*cel.Validator, *schema.Structural) {
	t.Helper()
	extraConfigOnce.Do(func() {
		b, err := JSON.ReadFile("json/glance.openstack.c5c3.io_glances.json")
		if err != nil {
			extraConfigErr = err
			return
		}
		var crd apiextensionsv1.CustomResourceDefinition
		if extraConfigErr = json.Unmarshal(b, &crd); extraConfigErr != nil {
			return
		}
		ec := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties["extraConfig"]
		_, s, err := structural(&ec)
		if err != nil {
			extraConfigErr = err
			return
		}
		extraConfigCEL, extraConfigSch = cel.NewValidator(s, false, celconfig.PerCallLimit), s
	})
	if extraConfigErr != nil {
		t.Fatal(extraConfigErr)
	}
	return extraConfigCEL, extraConfigSch
}

// refusal is what the API server's own validators say of the Glance with
// one extraConfig option: the schema and the rules of the object and of
// spec (For), and the CEL rules of spec.extraConfig.
func refusal(t *testing.T, section, key string, signatureVerification bool) []string {
	t.Helper()
	v, err := For(v1alpha1.GlanceKind)
	if err != nil {
		t.Fatal(err)
	}
	var obj map[string]any
	if err := json.Unmarshal([]byte(spellingGlance), &obj); err != nil {
		t.Fatal(err)
	}
	spec := obj["spec"].(map[string]any)
	cfg := map[string]any{section: map[string]any{key: "mysql+pymysql://glance:hunter2@db/glance"}}
	spec["extraConfig"] = cfg
	if signatureVerification {
		spec["imageSignatureVerification"] = map[string]any{"enabled": true}
	}
	errs := v.Check(obj)
	rules, s := extraConfigRules(t)
	celErrs, _ := rules.Validate(context.Background(), field.NewPath("spec", "extraConfig"), s, cfg, nil, celconfig.RuntimeCELCostBudget)
	var out []string
	for _, e := range append(errs, celErrs...) {
		out = append(out, e.Error())
	}
	return out
}

func refusedWith(t *testing.T, got []string, want string) bool {
	t.Helper()
	for _, g := range got {
		if strings.Contains(g, want) {
			return true
		}
	}
	return false
}

// TestCELRefusesEverySpelling: the CRD's CEL rules refuse what the
// function's Go rules refuse (krm/v1alpha1/rules_extraconfig.go), in the
// same words, for every deprecated spelling of an owned option and every
// spelling of a secret option, whatever the case of the section; so the
// API server keeps a password out of the ConfigMap as the build does. The
// corpus proves one case of each rule on a real kube-apiserver.
func TestCELRefusesEverySpelling(t *testing.T) {
	if got := refusal(t, "DEFAULT", "debug", false); len(got) != 0 {
		t.Fatalf("the test Glance is refused: %v", got)
	}
	sections := func(s string) []string {
		if s == "DEFAULT" {
			return []string{s}
		}
		return []string{s, strings.ToUpper(s)}
	}
	for spelling, cur := range v1alpha1.GlanceDeprecatedOptions {
		owner, ok := v1alpha1.GlanceOwnedOptions[cur]
		if !ok {
			continue
		}
		want := v1alpha1.DeprecatedOwnedConfigMessage(spelling, cur, owner)
		for _, s := range sections(spelling.Section) {
			if got := refusal(t, s, spelling.Key, false); !refusedWith(t, got, want) {
				t.Errorf("[%s] %s: no CEL rule says %q; the API server said %v", s, spelling.Key, want, got)
			}
		}
	}
	for section, keys := range v1alpha1.GlanceSecretOptions {
		for _, k := range keys {
			o := v1alpha1.ConfigOption{Section: section, Key: k}
			want := v1alpha1.SecretConfigMessage(section)
			if _, owned := v1alpha1.GlanceOwnedOptions[o]; owned {
				continue
			}
			if cur, ok := v1alpha1.GlanceDeprecatedOptions[o]; ok {
				if owner, owned := v1alpha1.GlanceOwnedOptions[cur]; owned {
					want = v1alpha1.DeprecatedOwnedConfigMessage(o, cur, owner)
				}
			}
			for _, s := range sections(section) {
				if got := refusal(t, s, k, false); !refusedWith(t, got, want) {
					t.Errorf("[%s] %s: no CEL rule says %q; the API server said %v", s, k, want, got)
				}
			}
		}
	}
	for spelling, cur := range v1alpha1.GlanceDeprecatedOptions {
		for _, owned := range signatureVerificationOptions {
			if cur != owned {
				continue
			}
			for _, s := range sections(spelling.Section) {
				got := refusal(t, s, spelling.Key, true)
				if !refusedWith(t, got, "["+spelling.Section+"] "+spelling.Key) || !refusedWith(t, got, "owned by spec.imageSignatureVerification while it is enabled") {
					t.Errorf("[%s] %s with signature verification on: no CEL rule names it as owned by spec.imageSignatureVerification; the API server said %v", s, spelling.Key, got)
				}
				if got := refusal(t, s, spelling.Key, false); len(got) != 0 {
					t.Errorf("[%s] %s with signature verification off is refused: %v", s, spelling.Key, got)
				}
			}
		}
	}
}
