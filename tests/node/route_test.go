//go:build e2e

package node_test

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var httpRoutes = schema.GroupVersionResource{Group: "gateway.networking.k8s.io", Version: "v1", Resource: "httproutes"}

// routeGateway is the Gateway the engines' Glances route through. No
// Gateway API implementation runs on the node (docs/proven.md says why):
// the route is applied, ordered and diffed, never served.
const routeGateway = "glance-gateway"

// withRoute gives the Glance an HTTPRoute (spec.gateway), so that every
// generated kind goes through the engine on day 1.
func (s *scenario) withRoute(t *testing.T) {
	t.Helper()
	s.edit(t, "  networkPolicy:\n", "  gateway:\n    parentRef:\n      name: "+routeGateway+"\n    hostname: glance."+s.ns+".test\n  networkPolicy:\n")
}

// routeAfterWorkload reads the HTTPRoute back: applied, to the Glance's
// Service, and not before the newest ReplicaSet (its wave or step comes
// after the workload's, which an HTTPRoute's health depends on).
func (s *scenario) routeAfterWorkload(t *testing.T) {
	t.Helper()
	route, err := s.resource(t, httpRoutes, s.ns, "glance")
	if err != nil {
		t.Fatalf("the HTTPRoute: %v", err)
	}
	rules, _, _ := unstructured.NestedSlice(route.Object, "spec", "rules")
	var backend string
	if len(rules) == 1 {
		refs, _, _ := unstructured.NestedSlice(rules[0].(map[string]any), "backendRefs")
		if len(refs) == 1 {
			backend, _, _ = unstructured.NestedString(refs[0].(map[string]any), "name")
		}
	}
	if backend != "glance" {
		t.Errorf("the HTTPRoute's rules %v: want one rule to the Service glance", rules)
	}
	rss, err := s.n.Client.AppsV1().ReplicaSets(s.ns).List(context.Background(), metav1.ListOptions{LabelSelector: "app.kubernetes.io/instance=glance,app.kubernetes.io/component=api"})
	if err != nil {
		t.Fatal(err)
	}
	created := route.GetCreationTimestamp()
	for _, rs := range rss.Items {
		if created.Before(&rs.CreationTimestamp) {
			t.Errorf("the HTTPRoute was created at %s, before ReplicaSet %s (%s)", created, rs.Name, rs.CreationTimestamp)
		}
	}
}
