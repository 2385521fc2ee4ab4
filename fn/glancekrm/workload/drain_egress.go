package workload

import (
	"net"
	"regexp"
	"slices"
	"strings"

	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

// kubeAPIPorts are the API server's usual ports. The drain writes its
// record through the API server, whose address is the cluster's (no
// rendered file holds it) and which no NetworkPolicy peer selects.
var kubeAPIPorts = []int32{443, 6443}

// serviceHost is a Service's cluster name, <svc>.<ns>.svc with or
// without .cluster.local: the one host name a NetworkPolicy can name,
// by its namespace.
var serviceHost = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?\.([a-z0-9]([-a-z0-9]*[a-z0-9])?)\.svc(\.cluster\.local)?\.?$`)

const labelNamespaceName = "kubernetes.io/metadata.name"

// drainEgress is where the drain of d goes, each destination named as
// closely as a NetworkPolicy can: the pods of the Image API it copies
// through, on the API port; Keystone, at the hosts of the API's
// [keystone_authtoken] URLs (the service user's token); the target
// store's S3 host (the copy is read back from its bucket); the API server
// (the record). Not the database, not memcached: the drain contacts
// neither. Hosts come from the API's rendered files (render.Egress), as
// the API's own policy's ports do.
func drainEgress(g *v1alpha1.Glance, d v1alpha1.StoreDrain, a API) []networkingv1.NetworkPolicyEgressRule {
	// A hand-written workload's pods carry labels of its author's: any pod
	// of the Glance's namespace on the API port.
	pods := metav1.LabelSelector{}
	if !a.Served {
		pods.MatchLabels = selectorLabels(instanceOf(g.Name, d.API))
		pods.MatchLabels[labelAppComponent] = componentAPI
	}
	rules := []networkingv1.NetworkPolicyEgressRule{{
		To: []networkingv1.NetworkPolicyPeer{{PodSelector: &pods}}, Ports: tcpPorts([]int32{v1alpha1.APIPort}),
	}}
	for _, c := range a.Egress.Contacts {
		if c.URL && (c.Section == "keystone_authtoken" || (c.Section == d.To && c.Key == "s3_store_host")) {
			rules = append(rules, hostEgress(c.Host, c.Port))
		}
	}
	return append(rules, networkingv1.NetworkPolicyEgressRule{Ports: tcpPorts(kubeAPIPorts)})
}

// hostEgress admits one host on one port: a Service's cluster name by its
// namespace, an IP address by itself. Any other name (a host outside the
// cluster, a Service's short name) cannot be named by a NetworkPolicy,
// which selects pods, namespaces and address blocks but no DNS name: it
// is admitted by its port alone.
func hostEgress(host string, port int32) networkingv1.NetworkPolicyEgressRule {
	r := networkingv1.NetworkPolicyEgressRule{Ports: tcpPorts([]int32{port})}
	host = strings.ToLower(host)
	if ip := net.ParseIP(host); ip != nil {
		bits := "/32"
		if ip.To4() == nil {
			bits = "/128"
		}
		r.To = []networkingv1.NetworkPolicyPeer{{IPBlock: &networkingv1.IPBlock{CIDR: ip.String() + bits}}}
	} else if m := serviceHost.FindStringSubmatch(host); m != nil {
		r.To = []networkingv1.NetworkPolicyPeer{{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{labelNamespaceName: m[2]}}}}
	}
	return r
}

// compactRules merges the rules to the same peers (their ports, in the
// order first named) and drops a repeated port.
func compactRules(rules []networkingv1.NetworkPolicyEgressRule) []networkingv1.NetworkPolicyEgressRule {
	var out []networkingv1.NetworkPolicyEgressRule
	for _, r := range rules {
		i := slices.IndexFunc(out, func(o networkingv1.NetworkPolicyEgressRule) bool { return equality.Semantic.DeepEqual(o.To, r.To) })
		if i < 0 {
			out = append(out, *r.DeepCopy())
			continue
		}
		for _, p := range r.Ports {
			if !slices.ContainsFunc(out[i].Ports, func(q networkingv1.NetworkPolicyPort) bool { return equality.Semantic.DeepEqual(p, q) }) {
				out[i].Ports = append(out[i].Ports, p)
			}
		}
	}
	return out
}
