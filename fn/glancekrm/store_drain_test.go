package glancekrm

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/c5c3/glance-krm/internal/fntest"
	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

// drainingBackend is testBackend with the drain-to annotation.
func drainingBackend(name, to string, isDefault bool) string {
	return strings.Replace(fntest.Backend(name, "glance", isDefault), "metadata: {name: "+name+", namespace: ns}",
		"metadata: {name: "+name+", namespace: ns, annotations: {glance.openstack.c5c3.io/drain-to: "+to+"}}", 1)
}

// TestStoreDrainJob: a backend's drain-to annotation generates the drain
// of that store: its Job (through the Service of the API that serves both
// stores, after the Deployments, no release annotation: it migrates no
// schema), the script's immutable ConfigMap, the service account that may
// write exactly the drain's record, and with spec.networkPolicy the drain
// pods' policy, which every API's policy admits. A second run changes
// nothing.
func TestStoreDrainJob(t *testing.T) {
	input := fntest.Docs(glanceWith(twoAPIs+`  networkPolicy: {ingress: [{namespaceSelector: {matchLabels: {team: x}}}]}
`), drainingBackend("a", "b", false), fntest.Backend("b", "glance", true))
	rl, failed := runFnOn(t, input)
	if failed {
		t.Fatalf("failed: %v", rl.Results)
	}
	var job, script, role, record *fn.KubeObject
	var policies []*fn.KubeObject
	for _, o := range rl.Items {
		switch {
		case o.GetKind() == "Job" && o.GetLabel("app.kubernetes.io/component") == "store-drain":
			job = o
		case o.GetKind() == "ConfigMap" && strings.HasPrefix(o.GetName(), "glance-store-drain-script-"):
			script = o
		case o.GetKind() == "ConfigMap" && o.GetName() == "glance-store-drain-a":
			record = o
		case o.GetKind() == "Role" && o.GetName() == "glance-store-drain":
			role = o
		case o.GetKind() == "NetworkPolicy":
			policies = append(policies, o)
		}
	}
	if job == nil || script == nil || role == nil || record == nil {
		t.Fatalf("want the drain Job, its script, its Role and its record; items: %v", names(rl.Items))
	}
	if !strings.HasPrefix(job.GetName(), "glance-store-drain-a-") || len(job.GetName()) != len("glance-store-drain-a-")+8 {
		t.Errorf("Job %s, want glance-store-drain-a-<hash>", job.GetName())
	}
	y := job.String()
	for _, want := range []string{"- /var/lib/glance-krm/store-drain/drain.py\n        - a\n        - b\n",
		"value: http://glance-default.ns.svc:9292", "value: glance-store-drain-a\n", "serviceAccountName: glance-store-drain",
		"name: " + script.GetName(), "- name: GLANCE_KRM_DRAIN_JOB\n          value: " + job.GetName() + "\n"} {
		if !strings.Contains(y, want) {
			t.Errorf("the drain Job lacks %q:\n%s", want, y)
		}
	}
	if job.GetAnnotation(v1alpha1.AnnotationRelease) != "" {
		t.Error("the drain Job carries the openstack-release annotation: the controller would take it for a schema migration")
	}
	if w, d := job.GetAnnotation("argocd.argoproj.io/sync-wave"), job.GetAnnotation("config.kubernetes.io/depends-on"); w != "2" ||
		d != "apps/namespaces/ns/Deployment/glance,apps/namespaces/ns/Deployment/glance-next,/namespaces/ns/ConfigMap/glance-store-drain-a" {
		t.Errorf("wave %q depends-on %q: want 2, after every Deployment and the record", w, d)
	}
	if from := job.GetAnnotation(v1alpha1.AnnotationDrainFrom); from != "a" {
		t.Errorf("the drain Job's %s is %q, want a", v1alpha1.AnnotationDrainFrom, from)
	}
	// The record: the render's, empty, before the Job (the first wave).
	if got := record.GetLabels(); !maps.Equal(got, map[string]string{v1alpha1.LabelManagedBy: "glance-krm",
		v1alpha1.LabelComponent: v1alpha1.ComponentDrainRecord, v1alpha1.LabelGlance: "glance"}) {
		t.Errorf("the record's labels are %v", got)
	}
	if _, found, _ := record.NestedStringMap("data"); found {
		t.Errorf("the rendered record has data, which a GitOps engine would set back over the Job's:\n%s", record.String())
	}
	if w := record.GetAnnotation("argocd.argoproj.io/sync-wave"); w != "0" {
		t.Errorf("the record is in wave %q, the Job in 2: it must be there before the Job, in wave 0", w)
	}
	embedded, err := os.ReadFile("workload/drain.py")
	if err != nil {
		t.Fatal(err)
	}
	if got, _, _ := script.NestedString("data", "drain.py"); got != string(embedded) {
		t.Error("the script ConfigMap does not hold workload/drain.py")
	}
	if imm, _, _ := script.NestedBool("immutable"); !imm {
		t.Error("the script ConfigMap is not immutable")
	}
	var r rbacv1.Role
	if err := role.As(&r); err != nil {
		t.Fatal(err)
	}
	if want := []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: []string{"glance-store-drain-a"},
		Verbs: []string{"get", "update", "patch"}}}; !equality.Semantic.DeepEqual(r.Rules, want) {
		t.Errorf("the Role's rules are %+v, want only get, update and patch of the record", r.Rules)
	}
	admitted := 0
	var own *fn.KubeObject
	for _, p := range policies {
		if p.GetName() == "glance-store-drain" {
			own = p
		} else if strings.Contains(p.String(), "app.kubernetes.io/component: store-drain") {
			admitted++
		}
	}
	if own == nil {
		t.Error("no drain NetworkPolicy")
	}
	if admitted != 2 {
		t.Errorf("%d API policies admit the drain pods, want both (glance, glance-next)", admitted)
	}

	again, failed := runFn(t, itemsOf(t, mustYAML(t, rl)))
	if failed || !bytes.Equal(itemsOf(t, again), itemsOf(t, mustYAML(t, rl))) {
		t.Error("a second run on its own output changed it")
	}

	// The next commit drops the annotation: a run on the last output (as
	// kpt keeps it) drops every drain object, the record too.
	dropped := bytes.Replace(itemsOf(t, mustYAML(t, rl)), []byte("glance.openstack.c5c3.io/drain-to: b"), []byte("other: x"), 1)
	out, failed := runFn(t, dropped)
	rl2, err := fn.ParseResourceList(out)
	if err != nil || failed {
		t.Fatalf("failed: %v %s", err, out)
	}
	if i := slices.IndexFunc(rl2.Items, func(o *fn.KubeObject) bool { return strings.Contains(o.GetName(), "store-drain") }); i >= 0 {
		t.Errorf("the drain is no longer asked for, yet %s %s stays", rl2.Items[i].GetKind(), rl2.Items[i].GetName())
	}

	// Without the annotation, no drain object.
	rl, _ = runFnOn(t, fntest.Docs(glanceWith(twoAPIs), fntest.Backend("a", "glance", false), fntest.Backend("b", "glance", true)))
	if i := slices.IndexFunc(rl.Items, func(o *fn.KubeObject) bool { return strings.Contains(o.GetName(), "store-drain") }); i >= 0 {
		t.Errorf("no drain asked for, yet %s %s", rl.Items[i].GetKind(), rl.Items[i].GetName())
	}
}

// TestStoreDrainRefused: a drain into a store the Glance does not have,
// through no API that serves both, or of a store that is an API's default
// (new uploads would land in it) is an error on the GlanceBackend at its
// annotation, and nothing is rendered.
func TestStoreDrainRefused(t *testing.T) {
	for name, tc := range map[string]struct{ input, says string }{
		"an unknown target": {fntest.Docs(fntest.Glance, drainingBackend("a", "elsewhere", false), fntest.Backend("b", "glance", true)), `"elsewhere"`},
		"no API serves both": {fntest.Docs(glanceWith(`  apis:
  - name: default
    backends: [a, c]
    defaultBackend: c
  - name: next
    backends: [b]
    defaultBackend: b
`), drainingBackend("a", "b", false), fntest.Backend("b", "glance", false), fntest.Backend("c", "glance", true)), `no Image API of the Glance serves both "a" and "b"`},
		"the default store": {fntest.Docs(fntest.Glance, drainingBackend("a", "b", true), fntest.Backend("b", "glance", false)),
			`store "a" is the default store of Image API "default": new uploads land in the default store and would be orphaned by the store's removal`},
		"the default of one API": {fntest.Docs(glanceWith(`  apis:
  - name: default
  - name: old
    replicas: 1
    backends: [a]
    defaultBackend: a
`), drainingBackend("a", "b", false), fntest.Backend("b", "glance", true)), `store "a" is the default store of Image API "old"`},
	} {
		t.Run(name, func(t *testing.T) {
			rl, failed := runFnOn(t, tc.input)
			if !failed {
				t.Fatal("the function passed")
			}
			i := slices.IndexFunc(rl.Results, func(r *fn.Result) bool {
				return r.Severity == fn.Error && strings.Contains(r.Message, tc.says) && r.ResourceRef != nil && r.ResourceRef.Name == "a" &&
					r.Field != nil && r.Field.Path == "metadata.annotations[glance.openstack.c5c3.io/drain-to]"
			})
			if i < 0 {
				t.Errorf("no error on GlanceBackend a at its annotation saying %q: %v", tc.says, rl.Results)
			}
			if slices.ContainsFunc(rl.Items, func(o *fn.KubeObject) bool { return o.GetKind() == "Job" }) {
				t.Error("a Job was rendered for a refused Glance")
			}
		})
	}
}

func mustYAML(t *testing.T, rl *fn.ResourceList) []byte {
	t.Helper()
	b, err := rl.ToYAML()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func names(objs fn.KubeObjects) []string {
	out := make([]string, len(objs))
	for i, o := range objs {
		out[i] = o.GetKind() + "/" + o.GetName()
	}
	return out
}

// TestStoreDrainOfTheDefaultMovedAway: the commit that drains the old
// default store also makes another store the default: it passes.
func TestStoreDrainOfTheDefaultMovedAway(t *testing.T) {
	rl, failed := runFnOn(t, fntest.Docs(fntest.Glance, drainingBackend("a", "b", false), fntest.Backend("b", "glance", true)))
	if failed || !slices.ContainsFunc(rl.Items, func(o *fn.KubeObject) bool {
		return o.GetKind() == "Job" && o.GetAnnotation(v1alpha1.AnnotationDrainFrom) == "a"
	}) {
		t.Errorf("the drain of a former default did not pass: %v", rl.Results)
	}
}

// TestStoreDrainNamesFit walks the longest names the CRDs allow (a Glance
// of MaxGlanceNameLength, a store of a DNS subdomain's 253 characters,
// dotted, and mixes of both with short ones): every object the drain
// generates is named within its kind's limit (a Job within 63 characters,
// a DNS label, since its pods carry its name in a label), every label
// value is one, two stores never share a name, and the record and Job
// are the ones krm/v1alpha1 names (what explain and the controller look
// up).
func TestStoreDrainNamesFit(t *testing.T) {
	glance43 := "g" + strings.Repeat("l", v1alpha1.MaxGlanceNameLength-1)
	dotted := strings.Repeat(strings.Repeat("s", 62)+".", 4) + "s"
	long := strings.Repeat("s", 252) + "x"
	for _, glance := range []string{"glance", strings.Repeat("g", 30), glance43} {
		for _, stores := range [][2]string{{"a", "b"}, {strings.Repeat("s", 25), "b"}, {dotted, long}, {long, dotted}, {dotted, "b"}} {
			t.Run(fmt.Sprintf("%d-%d-%d", len(glance), len(stores[0]), len(stores[1])), func(t *testing.T) {
				g := strings.Replace(glanceWith("  networkPolicy: {ingress: [{namespaceSelector: {}}]}\n"), "name: glance, namespace: ns", "name: "+glance+", namespace: ns", 1)
				backends := []string{drainingBackend(stores[0], "target", false), drainingBackend(stores[1], "target", false), fntest.Backend("target", glance, true)}
				for i := range backends[:2] {
					backends[i] = strings.Replace(backends[i], "glanceRef: {name: glance}", "glanceRef: {name: "+glance+"}", 1)
					backends[i] = strings.Replace(backends[i], "bucket: "+stores[i]+"-bucket", "bucket: b"+strconv.Itoa(i), 1)
				}
				rl, failed := runFnOn(t, fntest.Docs(append([]string{g}, backends...)...))
				if failed {
					t.Fatalf("failed: %v", rl.Results)
				}
				seen := map[string]bool{}
				jobs, records := map[string]string{}, map[string]bool{}
				for _, o := range rl.Items {
					id := o.GetKind() + "/" + o.GetName()
					if seen[id] {
						t.Errorf("two %s", id)
					}
					seen[id] = true
					checkName(t, o)
					if o.GetKind() == "Job" && o.GetAnnotation(v1alpha1.AnnotationDrainFrom) != "" {
						jobs[o.GetAnnotation(v1alpha1.AnnotationDrainFrom)] = o.GetName()
					}
					if o.GetKind() == "ConfigMap" && o.GetLabel(v1alpha1.LabelComponent) == v1alpha1.ComponentDrainRecord {
						records[o.GetName()] = true
					}
				}
				for _, s := range stores {
					job := jobs[s]
					if job == "" || job != v1alpha1.DrainJobName(glance, s, job[len(job)-8:]) {
						t.Errorf("store %s: drain Job %q, not the one v1alpha1.DrainJobName names", s, job)
					}
					if !records[v1alpha1.DrainRecordName(glance, s)] {
						t.Errorf("store %s: no record %s", s, v1alpha1.DrainRecordName(glance, s))
					}
				}
			})
		}
	}
}

// checkName checks an object's name and label values (its own, and its
// pods') with Kubernetes' own validators.
func checkName(t *testing.T, o *fn.KubeObject) {
	t.Helper()
	name := o.GetName()
	errs := validation.IsDNS1123Subdomain(name)
	switch o.GetKind() {
	case "Job":
		errs = append(errs, validation.IsDNS1123Label(name)...)
		errs = append(errs, validation.IsValidLabelValue(name)...)
	case "Service":
		errs = append(errs, validation.IsDNS1035Label(name)...)
	}
	for _, e := range errs {
		t.Errorf("%s %s: %s", o.GetKind(), name, e)
	}
	labels := []map[string]string{o.GetLabels()}
	for _, path := range [][]string{{"spec", "template", "metadata", "labels"}, {"spec", "jobTemplate", "spec", "template", "metadata", "labels"}} {
		if l, found, _ := o.NestedStringMap(path...); found {
			labels = append(labels, l)
		}
	}
	for _, l := range labels {
		for k, v := range l {
			for _, e := range append(validation.IsQualifiedName(k), validation.IsValidLabelValue(v)...) {
				t.Errorf("%s %s: label %s=%s: %s", o.GetKind(), name, k, v, e)
			}
		}
	}
}

// drainPolicyGlance reaches Keystone through a Service's cluster name, the
// database and memcached on ports of their own.
const drainPolicyGlance = `apiVersion: glance.openstack.c5c3.io/v1alpha1
kind: Glance
metadata: {name: glance, namespace: ns}
spec:
  openStackRelease: "2025.2"
  image: {repository: ghcr.io/c5c3/glance, tag: "2025.2"}
  database: {host: mariadb, port: 3307, database: glance, secretRef: {name: db}}
  cache: {servers: ["memcached:11212"]}
  keystoneEndpoint: http://keystone.identity.svc:5000/v3
  serviceUser: {secretRef: {name: svc}}
  networkPolicy: {ingress: [{namespaceSelector: {}}]}
`

// TestStoreDrainNetworkPolicy: the drain pods reach DNS, the pods of the
// API they copy through on its port, Keystone and the target's S3 host
// (each named as a NetworkPolicy can: a Service's cluster name by its
// namespace, an address by itself, any other host by its port alone) and
// the API server's ports; never the database, memcached or the leaving
// store's host.
func TestStoreDrainNetworkPolicy(t *testing.T) {
	for name, tc := range map[string]struct {
		host, target string // the target store's s3.host, and how its rule reads
	}{
		"a Service":             {"http://rgw.storage.svc.cluster.local:7480", "namespace storage:7480"},
		"a Service, short":      {"http://rgw.storage.svc:7480", "namespace storage:7480"},
		"an IPv4 address":       {"http://10.1.2.3:7480", "10.1.2.3/32:7480"},
		"an IPv6 address":       {"'http://[fd00::7]:7480'", "fd00::7/128:7480"},
		"a name outside":        {"https://s3.example:7480", "any:7480"},
		"a name, scheme's port": {"https://s3.example", "any:443"},
	} {
		t.Run(name, func(t *testing.T) {
			target := strings.Replace(fntest.Backend("b", "glance", true), "https://s3.example", tc.host, 1)
			leaving := strings.Replace(drainingBackend("a", "b", false), "https://s3.example", "http://s3-a.example:7481", 1)
			rl, failed := runFnOn(t, fntest.Docs(drainPolicyGlance, leaving, target))
			if failed {
				t.Fatalf("failed: %v", rl.Results)
			}
			var policy *networkingv1.NetworkPolicy
			for _, o := range rl.Items {
				if o.GetKind() == "NetworkPolicy" && o.GetName() == "glance-store-drain" {
					policy = &networkingv1.NetworkPolicy{}
					if err := o.As(policy); err != nil {
						t.Fatal(err)
					}
				}
			}
			if policy == nil {
				t.Fatal("no drain NetworkPolicy")
			}
			want := []string{
				"any:udp/53", "any:53", "any:443", "any:6443",
				"pods app.kubernetes.io/component=api,app.kubernetes.io/instance=glance,app.kubernetes.io/name=glance:9292",
				"namespace identity:5000",
				tc.target,
			}
			got := admitted(policy)
			for _, w := range want {
				if !got[w] {
					t.Errorf("the drain policy does not admit %s; it admits %v", w, keys(got))
				}
			}
			for a := range got {
				for _, forbidden := range []string{":3307", ":11212", ":7481"} {
					if strings.HasSuffix(a, forbidden) {
						t.Errorf("the drain policy admits %s (the database, memcached or the leaving store)", a)
					}
				}
			}
			if len(got) != len(want)-btoi(tc.target == "any:443") {
				t.Errorf("the drain policy admits %v, want exactly %v", keys(got), want)
			}
			if len(policy.Spec.Ingress) != 0 || len(policy.Spec.PolicyTypes) != 2 {
				t.Errorf("the drain pods take connections: %+v", policy.Spec)
			}
		})
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// admitted is each destination a policy admits, as peer:port ("any" for
// a rule without peers; a UDP port is written udp/N).
func admitted(p *networkingv1.NetworkPolicy) map[string]bool {
	out := map[string]bool{}
	for _, r := range p.Spec.Egress {
		peers := []string{"any"}
		if len(r.To) > 0 {
			peers = nil
		}
		for _, to := range r.To {
			switch {
			case to.IPBlock != nil:
				peers = append(peers, to.IPBlock.CIDR)
			case to.NamespaceSelector != nil && to.PodSelector == nil:
				peers = append(peers, "namespace "+to.NamespaceSelector.MatchLabels["kubernetes.io/metadata.name"])
			case to.PodSelector != nil && to.NamespaceSelector == nil:
				l := to.PodSelector.MatchLabels
				peers = append(peers, "pods "+strings.Join([]string{"app.kubernetes.io/component=" + l["app.kubernetes.io/component"],
					"app.kubernetes.io/instance=" + l["app.kubernetes.io/instance"], "app.kubernetes.io/name=" + l["app.kubernetes.io/name"]}, ","))
			default:
				peers = append(peers, "unexpected peer")
			}
		}
		for _, peer := range peers {
			for _, port := range r.Ports {
				proto := ""
				if port.Protocol != nil && *port.Protocol == "UDP" {
					proto = "udp/"
				}
				out[peer+":"+proto+port.Port.String()] = true
			}
		}
	}
	return out
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
