package glancekrm

import (
	"strings"
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
)

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
			target := strings.Replace(testBackend("b", "glance", true), "https://s3.example", tc.host, 1)
			leaving := strings.Replace(drainingBackend("a", "b", false), "https://s3.example", "http://s3-a.example:7481", 1)
			rl, failed := runFnOn(t, docs(drainPolicyGlance, leaving, target))
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
