package corpus_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/c5c3/glance-krm/krm/crds"
	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

// notInCorpus are rule messages no corpus case can draw, each with why.
var notInCorpus = map[string]string{
	v1alpha1.MsgTypeImmutable: "S3 is the only type: any other value fails the enum, and the API server then skips CEL",
	v1alpha1.MsgExactlyOneDefault: "sibling-default uniqueness spans objects; CEL sees one object, so only the " +
		"function (at build time) and the controller (at run time) enforce it",
}

// celMessages lists the message of every CEL rule in the generated CRDs.
func celMessages(t *testing.T) []string {
	t.Helper()
	entries, err := crds.FS.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	var walk func(s *apiextensionsv1.JSONSchemaProps)
	walk = func(s *apiextensionsv1.JSONSchemaProps) {
		for _, r := range s.XValidations {
			out = append(out, r.Message)
		}
		for _, p := range s.Properties {
			walk(&p)
		}
		if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
			walk(s.AdditionalProperties.Schema)
		}
		if s.Items != nil && s.Items.Schema != nil {
			walk(s.Items.Schema)
		}
	}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".yaml") {
			continue
		}
		raw, err := crds.FS.ReadFile(e.Name())
		if err != nil {
			t.Fatal(err)
		}
		var crd apiextensionsv1.CustomResourceDefinition
		if err := sigsyaml.Unmarshal(raw, &crd); err != nil {
			t.Fatal(err)
		}
		walk(crd.Spec.Versions[0].Schema.OpenAPIV3Schema)
	}
	return out
}

// ruleMessages are the Msg* constants of krm/v1alpha1/messages.go, read
// from the source so that a new rule cannot be added without being seen.
func ruleMessages(t *testing.T) map[string]string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "../../krm/v1alpha1/messages.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	ast.Inspect(f, func(n ast.Node) bool {
		vs, ok := n.(*ast.ValueSpec)
		if !ok || len(vs.Values) != 1 || !strings.HasPrefix(vs.Names[0].Name, "Msg") {
			return true
		}
		if lit, ok := vs.Values[0].(*ast.BasicLit); ok {
			v, err := strconv.Unquote(lit.Value)
			if err != nil {
				t.Fatal(err)
			}
			out[vs.Names[0].Name] = v
		}
		return true
	})
	return out
}

func drawnByCorpus(cases []corpusCase, msg string) bool {
	for _, c := range cases {
		if c.expect != "" && (strings.Contains(c.expect, msg) || strings.Contains(msg, c.expect)) {
			return true
		}
	}
	return false
}

// TestEveryRuleHasBothVerdicts fails when a rule lives in one place only:
// every CEL rule of the CRDs must be drawn by a corpus case (whose function
// verdict then proves the function has it too), every rule message of the
// function likewise (whose API server verdict proves the CRD has it), and
// every denylist and owned-option entry, and every deprecated spelling of
// an owned option, must be a CEL rule of its own.
func TestEveryRuleHasBothVerdicts(t *testing.T) {
	cases := loadCorpus(t)
	cel := celMessages(t)
	if len(cel) < 20 {
		t.Fatalf("only %d CEL rules found in the CRDs", len(cel))
	}
	for _, msg := range cel {
		if _, ok := notInCorpus[msg]; !ok && !drawnByCorpus(cases, msg) {
			t.Errorf("CEL rule %q has no corpus case, so nothing proves the function enforces it", msg)
		}
	}
	for name, msg := range ruleMessages(t) {
		if _, ok := notInCorpus[msg]; !ok && !drawnByCorpus(cases, msg) {
			t.Errorf("rule %s (%q) has no corpus case, so nothing proves the CRD enforces it", name, msg)
		}
	}
	isCEL := map[string]bool{}
	for _, m := range cel {
		isCEL[m] = true
	}
	for key, owner := range v1alpha1.ExtraOptionOwners {
		if m := v1alpha1.OwnedOptionMessage(key, owner); !isCEL[m] {
			t.Errorf("denylisted extraOptions key %q has no CEL rule %q", key, m)
		}
	}
	for o, owner := range v1alpha1.GlanceOwnedOptions {
		if m := v1alpha1.OwnedConfigMessage(o, owner); !isCEL[m] {
			t.Errorf("owned option %s/%s has no CEL rule %q", o.Section, o.Key, m)
		}
	}
	for spelling, o := range v1alpha1.GlanceDeprecatedOptions {
		if owner, ok := v1alpha1.GlanceOwnedOptions[o]; ok {
			if m := v1alpha1.DeprecatedOwnedConfigMessage(spelling, o, owner); !isCEL[m] {
				t.Errorf("[%s] %s, a deprecated spelling of owned option %s/%s, has no CEL rule %q", spelling.Section, spelling.Key, o.Section, o.Key, m)
			}
		}
	}
}

// TestEverySecretOptionSectionHasCEL: each section of Glance's secret
// options is refused by the API server too, in the function's words.
func TestEverySecretOptionSectionHasCEL(t *testing.T) {
	cel := celMessages(t)
	for section := range v1alpha1.GlanceSecretOptions {
		want := v1alpha1.SecretConfigMessage(section)
		if strings.Contains(want, "()") {
			continue // every option of the section is owned by a typed field
		}
		if !slices.Contains(cel, want) {
			t.Errorf("no CEL rule on spec.extraConfig says %q", want)
		}
	}
}

// kubernetesTypes are fields of the seed schema that embed a Kubernetes
// type: a case must use the field, not each of the type's own fields.
var kubernetesTypes = []string{
	".spec.deployment.resources", ".spec.deployment.strategy", ".spec.deployment.topologySpreadConstraints",
	".spec.networkPolicy.ingress[].namespaceSelector", ".spec.networkPolicy.ingress[].podSelector",
	".spec.networkPolicy.additionalEgress", ".status.conditions",
}

// usedPaths are the schema paths an object sets, spelled as the schema
// walk spells them ([] for an item, {} for a map value).
func usedPaths(v any, path string, out map[string]bool, schema map[string]bool) {
	out[path] = true
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			p := path + "." + k
			if !schema[p] && schema[path+"{}"] {
				p = path + "{}"
			}
			usedPaths(e, p, out, schema)
		}
	case []any:
		for _, e := range x {
			usedPaths(e, path+"[]", out, schema)
		}
	}
}

// TestEverySeedFieldHasACase fails when a field of the seed system's schema
// (krm/testdata/seed/crds) is set by no corpus case and no seed object, so
// that no field of the contract goes untested.
func TestEverySeedFieldHasACase(t *testing.T) {
	used := map[string]map[string]bool{"Glance": {}, "GlanceBackend": {}}
	schemas := map[string]map[string]bool{}
	for kind, file := range map[string]string{"Glance": "glance.openstack.c5c3.io_glances.yaml", "GlanceBackend": "glance.openstack.c5c3.io_glancebackends.yaml"} {
		raw, err := os.ReadFile("../../krm/testdata/seed/crds/" + file)
		if err != nil {
			t.Fatal(err)
		}
		var crd apiextensionsv1.CustomResourceDefinition
		if err := sigsyaml.Unmarshal(raw, &crd); err != nil {
			t.Fatal(err)
		}
		schemas[kind] = map[string]bool{}
		var walk func(s *apiextensionsv1.JSONSchemaProps, p string)
		walk = func(s *apiextensionsv1.JSONSchemaProps, p string) {
			schemas[kind][p] = true
			for _, k := range kubernetesTypes {
				if p == k {
					return
				}
			}
			for name, c := range s.Properties {
				walk(&c, p+"."+name)
			}
			if s.Items != nil && s.Items.Schema != nil {
				walk(s.Items.Schema, p+"[]")
			}
			if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
				walk(s.AdditionalProperties.Schema, p+"{}")
			}
		}
		walk(crd.Spec.Versions[0].Schema.OpenAPIV3Schema, "")
	}
	var objs []*unstructured.Unstructured
	for _, c := range loadCorpus(t) {
		objs = append(objs, c.obj)
	}
	for _, sub := range []string{"valid", "invalid"} {
		for _, o := range loadSeed(t, sub) {
			objs = append(objs, o.obj)
		}
	}
	for _, o := range objs {
		if m := used[o.GetKind()]; m != nil {
			usedPaths(o.Object, "", m, schemas[o.GetKind()])
		}
	}
	for kind, paths := range schemas {
		for p := range paths {
			if p == "" || strings.HasPrefix(p, ".status") || strings.HasPrefix(p, ".metadata") || p == ".apiVersion" || p == ".kind" {
				continue
			}
			if !used[kind][p] {
				t.Errorf("%s field %s of the seed schema is set by no corpus case or seed object", kind, strings.TrimPrefix(p, "."))
			}
		}
	}
}
