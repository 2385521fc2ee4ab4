package v1alpha1_test

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/c5c3/glance-krm/internal/testenv"
	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

// metadefCases are policy overrides with the metadef write rules each one
// opens to callers without the admin role in 2025.1.
var metadefCases = map[string]struct {
	overrides map[string]string
	opened    []string
}{
	"no overrides":                         {map[string]string{}, nil},
	"member may create namespaces":         {map[string]string{"add_metadef_namespace": "role:member"}, []string{"add_metadef_namespace"}},
	"empty metadef_admin opens all":        {map[string]string{"metadef_admin": ""}, v1alpha1.MetadefWriteRules},
	"metadef_admin or member":              {map[string]string{"metadef_admin": "role:admin or role:member"}, v1alpha1.MetadefWriteRules},
	"context_is_admin widened":             {map[string]string{"context_is_admin": "role:admin or role:reader"}, v1alpha1.MetadefWriteRules},
	"admin and own project":                {map[string]string{"add_metadef_tag": "role:admin and project_id:%(project_id)s"}, nil},
	"not admin":                            {map[string]string{"delete_metadef_tags": "not role:admin"}, []string{"delete_metadef_tags"}},
	"never":                                {map[string]string{"modify_metadef_object": "!"}, nil},
	"always":                               {map[string]string{"add_metadef_property": "@"}, []string{"add_metadef_property"}},
	"metadef_default":                      {map[string]string{"add_metadef_object": "rule:metadef_default"}, []string{"add_metadef_object"}},
	"service role":                         {map[string]string{"add_metadef_namespace": "rule:service_api"}, []string{"add_metadef_namespace"}},
	"parenthesised member in project":      {map[string]string{"add_metadef_namespace": "(role:admin or role:member) and project_id:%(project_id)s"}, []string{"add_metadef_namespace"}},
	"undefined rule falls back to default": {map[string]string{"add_metadef_namespace": "rule:nonexistent"}, []string{"add_metadef_namespace"}},
	"a read rule is not a write":           {map[string]string{"get_metadef_namespace": ""}, nil},
	"is_admin":                             {map[string]string{"remove_metadef_property": "is_admin:True"}, nil},
	"unparseable":                          {map[string]string{"add_metadef_namespace": "role:admin or"}, nil},
	"admin role, any case":                 {map[string]string{"add_metadef_tags": "role:ADMIN"}, nil},
}

func TestOpenedMetadefRules(t *testing.T) {
	for name, tc := range metadefCases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.opened, v1alpha1.OpenedMetadefRules("2025.1", tc.overrides)); diff != "" {
				t.Errorf("opened rules (-want +got):\n%s", diff)
			}
		})
	}
}

// TestOpenedMetadefRulesAgreeWithGlance asks each Debian suite's glance
// and oslo.policy the same question for every case: with Glance's own
// registered defaults and the overrides as its policy file, which metadef
// write rules pass for a member, a reader, a service user or a caller
// with no role. The answer must be the function's for that release.
func TestOpenedMetadefRulesAgreeWithGlance(t *testing.T) {
	const script = `
import json, os, sys, tempfile, logging
logging.disable(logging.CRITICAL)
from oslo_config import cfg
from oslo_policy import policy
import glance.policies, glance.version
cases = json.loads(sys.argv[1])
rules = json.loads(sys.argv[2])
out = {"major": int(glance.version.version_info.version_string().split(".")[0]), "opened": {}}
principals = [["member", "reader"], ["reader"], ["service"], []]
for name, overrides in cases.items():
    d = tempfile.mkdtemp()
    path = os.path.join(d, "policy.json")
    with open(path, "w") as f:
        json.dump(overrides, f)
    conf = cfg.ConfigOpts()
    conf([], project="glance")
    e = policy.Enforcer(conf, policy_file=path)
    e.register_defaults(glance.policies.list_rules())
    e.load_rules()
    opened = []
    for rule in rules:
        for roles in principals:
            creds = {"roles": roles, "project_id": "p", "user_id": "u", "is_admin": False}
            if e.enforce(rule, {"project_id": "p", "owner": "p"}, creds):
                opened.append(rule)
                break
    out["opened"][name] = opened
print(json.dumps(out))
`
	in := map[string]map[string]string{}
	for name, tc := range metadefCases {
		in[name] = tc.overrides
	}
	cases, _ := json.Marshal(in)
	rules, _ := json.Marshal(v1alpha1.MetadefWriteRules)
	for _, py := range testenv.Pythons(t) {
		cmd := py.Command(script, string(cases), string(rules))
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s: Debian's glance and oslo.policy are required (make deps-glance): %v\n%s", py.Suite, err, stderr.String())
		}
		var got struct {
			Major  int
			Opened map[string][]string
		}
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		release := testenv.GlanceRelease(got.Major)
		for name, tc := range metadefCases {
			ours := v1alpha1.OpenedMetadefRules(release, tc.overrides)
			if !slices.Equal(got.Opened[name], ours) {
				t.Errorf("%s (glance %d, %s): %s: Glance's oslo.policy opens %v, glance-krm says %v", py.Suite, got.Major, release, name, got.Opened[name], ours)
			}
		}
	}
}
