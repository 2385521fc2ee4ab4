package findings

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func glance(t *testing.T) *fn.KubeObject {
	t.Helper()
	obj, err := fn.ParseKubeObject([]byte("apiVersion: glance.openstack.c5c3.io/v1alpha1\nkind: Glance\nmetadata:\n  name: glance\n  namespace: openstack\n  annotations:\n    internal.config.kubernetes.io/path: glance.yaml\n"))
	if err != nil {
		t.Fatal(err)
	}
	return obj
}

// A finding without a rule id is the function's defect: Results refuses
// it, so no run can write a result SARIF would name only "glance-krm".
func TestResultsRefuseAFindingWithoutARule(t *testing.T) {
	if _, err := Results([]Finding{General(Error, "", "something")}); err == nil || !strings.Contains(err.Error(), "without a rule id") {
		t.Errorf("a finding without a rule: %v", err)
	}
	if _, err := Results([]Finding{General("fatal", "r", "something")}); err == nil {
		t.Error("a finding of an unknown level was written")
	}
}

// The two message forms, the tags, the object and its file, the field,
// and URL userinfo removed.
func TestResults(t *testing.T) {
	obj := glance(t)
	rs, err := Results([]Finding{
		About(obj, Note, "summary", "rendered Glance openstack/glance"),
		About(obj, Warning, "debug-logs-store-keys", "debug is on").At("spec.logging.debug"),
		Fields(obj, "schema", field.ErrorList{field.Invalid(field.NewPath("spec", "keystoneEndpoint"), "x", "must be a URL")})[0],
		General(Error, "function-config", "functionConfig field spec.x is not understood").At("spec.x"),
		About(obj, Error, "exactly-one-default", "NoDefaultBackend: two defaults").Because("NoDefaultBackend"),
		About(obj, Error, "render", "cannot reach https://user:secret@s3.example/bucket"),
	})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rs {
		line := fmt.Sprintf("%s %v %q", r.Severity, r.Tags, r.Message)
		if r.Field != nil {
			line += " at " + r.Field.Path
		}
		if r.ResourceRef != nil {
			line += " on " + r.ResourceRef.Kind + " " + r.ResourceRef.Namespace + "/" + r.ResourceRef.Name
		}
		if r.File != nil {
			line += " in " + r.File.Path
		}
		got = append(got, line)
	}
	want := []string{
		`error map[rule:function-config] "glance-krm: functionConfig field spec.x is not understood" at spec.x`,
		`error map[reason:NoDefaultBackend rule:exactly-one-default] "glance-krm: NoDefaultBackend: two defaults" on Glance openstack/glance in glance.yaml`,
		`error map[rule:render] "glance-krm: cannot reach https://REDACTED@s3.example/bucket" on Glance openstack/glance in glance.yaml`,
		`error map[rule:schema] "spec.keystoneEndpoint: Invalid value: \"x\": must be a URL" at spec.keystoneEndpoint on Glance openstack/glance in glance.yaml`,
		`warning map[rule:debug-logs-store-keys] "glance-krm: debug is on" at spec.logging.debug on Glance openstack/glance in glance.yaml`,
		`info map[rule:summary] "glance-krm: rendered Glance openstack/glance" on Glance openstack/glance in glance.yaml`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// FromResult reads a result back for SARIF and annotations: its rule tag,
// else its reason tag, else "schema" for a field, else the function's name.
func TestFromResult(t *testing.T) {
	for _, c := range []struct {
		r         *fn.Result
		rule, lvl string
	}{
		{&fn.Result{Severity: fn.Error, Tags: map[string]string{TagRule: "kind", TagReason: "X"}}, "kind", Error},
		{&fn.Result{Severity: fn.Warning, Tags: map[string]string{TagReason: "WaitingForParent"}}, "WaitingForParent", Warning},
		{&fn.Result{Severity: fn.Error, Field: &fn.Field{Path: "spec.x"}}, "schema", Error},
		{&fn.Result{Severity: fn.Info}, "glance-krm", Note},
	} {
		if f := FromResult(c.r); f.Rule != c.rule || f.Level != c.lvl {
			t.Errorf("%+v: rule %q level %q, want %q %q", c.r, f.Rule, f.Level, c.rule, c.lvl)
		}
	}
}

// A check returns findings; the run hands them to Results once.
func ExampleResults() {
	obj, _ := fn.ParseKubeObject([]byte("apiVersion: glance.openstack.c5c3.io/v1alpha1\nkind: Glance\nmetadata: {name: glance, namespace: openstack}\n"))
	found := []Finding{
		About(obj, Warning, "workers-under-uwsgi", "spec.apiServer.workers has no effect on 2026.1").At("spec.apiServer.workers"),
	}
	rs, _ := Results(found)
	fmt.Println(rs[0].Severity, rs[0].Tags[TagRule], rs[0].Field.Path)
	fmt.Println(rs[0].Message)
	// Output:
	// warning workers-under-uwsgi spec.apiServer.workers
	// glance-krm: spec.apiServer.workers has no effect on 2026.1
}
