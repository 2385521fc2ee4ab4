package workload

import (
	"strings"

	"github.com/c5c3/glance-krm/fn/glancekrm/render"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

// routeRequestTimeout is the seed's HTTPRoute request timeout: image
// uploads and downloads stream for a long time.
const routeRequestTimeout = "4h"

// networkPolicy admits the API port from spec.networkPolicy's sources
// (and the Gateway's namespace) to the pods of one instance, and lets them
// reach DNS and every port their rendered files contact (egressOf), then
// spec.networkPolicy.additionalEgress. With a store drain its pods are
// admitted too: they copy images through the API.
func networkPolicy(g *v1alpha1.Glance, api string, e render.Egress, drains bool) *networkingv1.NetworkPolicy {
	s := &g.Spec
	instance := instanceOf(g.Name, api)
	var peers []networkingv1.NetworkPolicyPeer
	for _, src := range s.NetworkPolicy.Ingress {
		peers = append(peers, networkingv1.NetworkPolicyPeer{NamespaceSelector: src.NamespaceSelector.DeepCopy(), PodSelector: src.PodSelector.DeepCopy()})
	}
	if s.Gateway != nil {
		ns := s.Gateway.ParentRef.Namespace
		if ns == "" {
			ns = g.Namespace
		}
		peers = append(peers, networkingv1.NetworkPolicyPeer{NamespaceSelector: &metav1.LabelSelector{
			MatchLabels: map[string]string{"kubernetes.io/metadata.name": ns}}})
	}
	if drains {
		peers = append(peers, networkingv1.NetworkPolicyPeer{PodSelector: &metav1.LabelSelector{MatchLabels: drainPodSelector(g)}})
	}
	rules := []networkingv1.NetworkPolicyEgressRule{dnsEgress(), {Ports: tcpPorts(e.Ports)}}
	rules = append(rules, s.NetworkPolicy.AdditionalEgress...)
	return &networkingv1.NetworkPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: "networking.k8s.io/v1", Kind: "NetworkPolicy"},
		ObjectMeta: metav1.ObjectMeta{Name: instance, Namespace: g.Namespace, Labels: objectLabels(g.Name, api, commonLabels(instance))},
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: selectorLabels(instance)},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress},
			Ingress:     []networkingv1.NetworkPolicyIngressRule{{Ports: []networkingv1.NetworkPolicyPort{port(corev1.ProtocolTCP, v1alpha1.APIPort)}, From: peers}},
			Egress:      rules,
		},
	}
}

// jobsNetworkPolicy isolates the db-sync, db-contract and db-purge pods: nothing comes
// in, and out only DNS and the database (glance-manage contacts nothing
// else), then spec.networkPolicy.additionalEgress.
func jobsNetworkPolicy(g *v1alpha1.Glance) *networkingv1.NetworkPolicy {
	s := &g.Spec
	rules := []networkingv1.NetworkPolicyEgressRule{dnsEgress(), {Ports: tcpPorts([]int32{s.Database.DatabasePort()})}}
	rules = append(rules, s.NetworkPolicy.AdditionalEgress...)
	return &networkingv1.NetworkPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: "networking.k8s.io/v1", Kind: "NetworkPolicy"},
		ObjectMeta: metav1.ObjectMeta{Name: g.Name + "-jobs", Namespace: g.Namespace, Labels: objectLabels(g.Name, "", commonLabels(g.Name))},
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{
				MatchLabels: map[string]string{labelAppName: appName, v1alpha1.LabelGlance: g.Name},
				MatchExpressions: []metav1.LabelSelectorRequirement{{Key: labelAppComponent, Operator: metav1.LabelSelectorOpIn,
					Values: []string{componentDBContract, componentDBPurge, componentDBSync}}},
			},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress},
			Egress:      rules,
		},
	}
}

func dnsEgress() networkingv1.NetworkPolicyEgressRule {
	return networkingv1.NetworkPolicyEgressRule{Ports: []networkingv1.NetworkPolicyPort{port(corev1.ProtocolUDP, 53), port(corev1.ProtocolTCP, 53)}}
}

func port(proto corev1.Protocol, n int32) networkingv1.NetworkPolicyPort {
	return networkingv1.NetworkPolicyPort{Protocol: ptr.To(proto), Port: ptr.To(intstr.FromInt32(n))}
}

func tcpPorts(ns []int32) []networkingv1.NetworkPolicyPort {
	var out []networkingv1.NetworkPolicyPort
	for _, n := range ns {
		out = append(out, port(corev1.ProtocolTCP, n))
	}
	return out
}

// gatewayGroup is Gateway API's group, the HTTPRoute's and its parent's.
const gatewayGroup = "gateway.networking.k8s.io"

// httpRoute exposes the stable Service through spec.gateway. It is
// written as a plain object: the function does not link Gateway API's Go
// types for one object, and the tests check it against the CRD.
func httpRoute(g *v1alpha1.Glance) map[string]any {
	gw := g.Spec.Gateway
	// Every field the API server would default is written (the parent's
	// group and kind, the backend's group and weight): Argo CD compares a
	// custom resource's lists as wholes, so a default added to a list item
	// on the live route is drift after every sync (tests/generated).
	parent := map[string]any{"group": gatewayGroup, "kind": "Gateway", "name": gw.ParentRef.Name}
	if gw.ParentRef.Namespace != "" {
		parent["namespace"] = gw.ParentRef.Namespace
	}
	if gw.ParentRef.SectionName != "" {
		parent["sectionName"] = gw.ParentRef.SectionName
	}
	path := gw.Path
	if path == "" {
		path = "/"
	} else if !strings.HasPrefix(path, "/") {
		path = "/" + path
	}
	meta := map[string]any{"name": g.Name, "labels": objectLabels(g.Name, "", commonLabels(g.Name))}
	if g.Namespace != "" {
		meta["namespace"] = g.Namespace
	}
	if len(gw.Annotations) > 0 {
		meta["annotations"] = gw.Annotations
	}
	return map[string]any{
		"apiVersion": gatewayGroup + "/v1",
		"kind":       "HTTPRoute",
		"metadata":   meta,
		"spec": map[string]any{
			"parentRefs": []any{parent},
			"hostnames":  []any{gw.Hostname},
			"rules": []any{map[string]any{
				"matches":     []any{map[string]any{"path": map[string]any{"type": "PathPrefix", "value": path}}},
				"backendRefs": []any{map[string]any{"group": "", "kind": "Service", "name": g.Name, "port": v1alpha1.APIPort, "weight": 1}},
				"timeouts":    map[string]any{"request": routeRequestTimeout},
			}},
		},
	}
}
