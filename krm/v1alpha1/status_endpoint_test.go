package v1alpha1

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestStatusEndpoint: the seed's status.endpoint, https on the gateway's
// hostname (with its path prefix) or the stable Service's in-cluster URL.
func TestStatusEndpoint(t *testing.T) {
	for want, gw := range map[string]*GatewaySpec{
		"http://glance.openstack.svc.cluster.local:9292/": nil,
		"https://image.example.com/":                      {Hostname: "image.example.com"},
		"https://image.example.com/image/":                {Hostname: "image.example.com", Path: "/image/"},
		"https://image.example.com/v/":                    {Hostname: "image.example.com", Path: "/v"},
	} {
		g := &Glance{ObjectMeta: metav1.ObjectMeta{Name: "glance", Namespace: "openstack"}}
		g.Spec.Gateway = gw
		if got := g.StatusEndpoint(); got != want {
			t.Errorf("%+v: %q, want %q", gw, got, want)
		}
	}
}
