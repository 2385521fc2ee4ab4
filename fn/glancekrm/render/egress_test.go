package render

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestEgressContacts: each contact keeps its host and the option naming
// it; a list's brackets are no IPv6 address's.
func TestEgressContacts(t *testing.T) {
	var e Egress
	e.add("keystone_authtoken", "auth_url", "http://keystone.identity.svc:5000/v3")
	e.add("b", "s3_store_host", "http://[fd00::7]:7480")
	e.add("x", "endpoints", "[https://a.example, http://10.0.0.1:81]")
	e.add("cache", "memcache_servers", "inet6:[fd00::9]:11212,mc:11213,mc2")
	want := []Contact{
		{Section: "keystone_authtoken", Key: "auth_url", Host: "keystone.identity.svc", Port: 5000, URL: true},
		{Section: "b", Key: "s3_store_host", Host: "fd00::7", Port: 7480, URL: true},
		{Section: "x", Key: "endpoints", Host: "a.example", Port: 443, URL: true},
		{Section: "x", Key: "endpoints", Host: "10.0.0.1", Port: 81, URL: true},
		{Section: "cache", Key: "memcache_servers", Host: "fd00::9", Port: 11212},
		{Section: "cache", Key: "memcache_servers", Host: "mc", Port: 11213},
		{Section: "cache", Key: "memcache_servers", Host: "mc2", Port: 11211},
	}
	if diff := cmp.Diff(want, e.Contacts); diff != "" {
		t.Errorf("contacts (-want +got):\n%s", diff)
	}
}
