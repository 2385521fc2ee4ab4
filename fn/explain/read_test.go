package explain

import (
	"strings"
	"testing"
)

// A minimal render of one Glance: what the function writes for it.
const rendered = `apiVersion: glance.openstack.c5c3.io/v1alpha1
kind: Glance
metadata: {name: glance, namespace: ns}
spec: {openStackRelease: "2025.2"}
---
apiVersion: glance.openstack.c5c3.io/v1alpha1
kind: GlanceBackend
metadata: {name: primary, namespace: ns}
spec: {glanceRef: {name: glance}}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: glance-config-1
  namespace: ns
  labels: {glance.openstack.c5c3.io/glance: glance, glance.openstack.c5c3.io/component: config}
data:
  glance-api.conf: "[glance_store]\ndefault_backend = primary\n"
---
apiVersion: v1
kind: Secret
metadata:
  name: glance-backends-1
  namespace: ns
  labels: {glance.openstack.c5c3.io/glance: glance, glance.openstack.c5c3.io/component: backends}
stringData:
  backends.conf: "[primary]\ns3_store_host = http://s3\n"
`

func TestReadRefusesWhatIsNoWholeRender(t *testing.T) {
	input := strings.Join(strings.Split(rendered, "---\n")[:2], "---\n")
	for name, c := range map[string]struct {
		in, err string
	}{
		"the function's input (kustomize without --enable-exec)": {input, "the function did not run on Glance ns/glance"},
		"a Glance without backends, never rendered":              {strings.Split(rendered, "---\n")[0], "the function did not run on Glance ns/glance"},
		"two renders concatenated":                               {rendered + "---\n" + rendered, "Glance ns/glance (glance.openstack.c5c3.io/v1alpha1) appears twice"},
		"a scalar document":                                      {rendered + "---\nhello\n", "document 5 is not an object but a scalar"},
		"a list document":                                        {rendered + "---\n- a\n", "document 5 is not an object but a list"},
		"a mapping that is no object":                            {rendered + "---\nfoo: bar\n", "document 5 is not a Kubernetes object"},
		"an object without a name":                               {rendered + "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {}\n", "document 5 is not a Kubernetes object"},
		"a List whose items are no list":                         {"apiVersion: v1\nkind: List\nitems: {a: b}\n", "are not a list"},
		"an empty List":                                          {"apiVersion: v1\nkind: List\nitems: []\n", "it holds no object"},
		"two versions of one object":                             {rendered + "---\napiVersion: glance.openstack.c5c3.io/v1beta1\nkind: Glance\nmetadata: {name: glance, namespace: ns}\n", "appears twice"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Read([]byte(c.in))
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("Read: %v, want an error saying %q", err, c.err)
			}
		})
	}
}

// TestReadUnwrapsLists: what `kubectl get -o yaml` writes (a List, nested
// in another) reads as the objects it holds.
func TestReadUnwrapsLists(t *testing.T) {
	var items []string
	for _, doc := range strings.Split(rendered, "---\n") {
		items = append(items, "- "+strings.ReplaceAll(strings.TrimSpace(doc), "\n", "\n  "))
	}
	list := "apiVersion: v1\nkind: List\nitems:\n" + strings.Join(items[:2], "\n") + "\n- apiVersion: v1\n  kind: List\n  items:\n" +
		"  " + strings.ReplaceAll(strings.Join(items[2:], "\n"), "\n", "\n  ") + "\n"
	r, err := Read([]byte(list))
	if err != nil {
		t.Fatalf("Read: %v\n%s", err, list)
	}
	g := r.Glances["ns/glance"]
	if g == nil || g.Stores["primary"]["s3_store_host"] != "http://s3" || g.Defaults["default"] != "primary" {
		t.Errorf("the List read as %+v", g)
	}
}

func TestReadDrainRecordsFromAList(t *testing.T) {
	list := `apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: glance-store-drain-secondary
    namespace: ns
    labels: {glance.openstack.c5c3.io/glance: glance, glance.openstack.c5c3.io/component: drain-record}
  data: {from: secondary, to: primary, state: Complete, remaining: "0", job: glance-store-drain-secondary-01234567}
`
	rs, err := ReadDrainRecords([]byte(list))
	if err != nil || len(rs) != 1 || rs[0].Job != "glance-store-drain-secondary-01234567" || rs[0].Namespace != "ns" || rs[0].Glance != "ns/glance" {
		t.Errorf("ReadDrainRecords: %+v, %v", rs, err)
	}
	if rs, err := ReadDrainRecords([]byte("apiVersion: v1\nkind: List\nitems: []\n")); err != nil || len(rs) != 0 {
		t.Errorf("an empty List (no drain in the cluster): %+v, %v", rs, err)
	}
	if _, err := ReadDrainRecords([]byte(rendered)); err == nil || !strings.Contains(err.Error(), "is no drain record") {
		t.Errorf("a render as a record: %v", err)
	}
}
