package glancekrm

import (
	"fmt"
	"net"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	"gopkg.in/ini.v1"
	networkingv1 "k8s.io/api/networking/v1"
	"sigs.k8s.io/yaml"

	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

// egressGlance reaches everything on a port of its own: Keystone, the
// database, two memcached servers, barbican (named in extraConfig) and
// two web-download ports.
const egressGlance = `apiVersion: glance.openstack.c5c3.io/v1alpha1
kind: Glance
metadata: {name: glance, namespace: ns}
spec:
  openStackRelease: "2025.2"
  image: {repository: ghcr.io/c5c3/glance, tag: "2025.2"}
  database: {host: mariadb, port: 3307, database: glance, secretRef: {name: db}}
  cache: {servers: ["memcached-a:11212", "memcached-b:11213"]}
  keystoneEndpoint: http://keystone:35357/v3
  serviceUser: {secretRef: {name: svc}}
  imageSignatureVerification: {enabled: true}
  importFiltering: {allowedPorts: [8443, 443]}
  networkPolicy: {ingress: [{namespaceSelector: {}}]}
`

const namedBarbican = `  extraConfig:
    barbican: {barbican_endpoint: "https://barbican.example:9311"}
`

// TestNetworkPolicyAdmitsTheRenderedEndpoints reads every endpoint out of
// the rendered files with a reader of its own (gopkg.in/ini.v1 and a URL
// pattern: every value holding scheme://host, every host:port of a
// *_servers option), the database port from the spec (the connection is
// composed in the pod) and web-download's allowed ports, and checks that
// the generated NetworkPolicy of the pods reading those files admits each.
func TestNetworkPolicyAdmitsTheRenderedEndpoints(t *testing.T) {
	for name, input := range map[string]string{
		"every endpoint on its own port": docs(egressGlance+namedBarbican, testBackend("a", "glance", true),
			strings.Replace(testBackend("b", "glance", false), "https://s3.example", "http://s3-b.example:7480", 1)),
		"barbican through the catalog warns": docs(egressGlance, testBackend("a", "glance", true)),
		"an empty allowed_ports warns":       docs(strings.Replace(egressGlance+namedBarbican, "allowedPorts: [8443, 443]", "allowedPorts: []", 1), testBackend("a", "glance", true)),
		"additionalEgress takes the warning": docs(strings.Replace(egressGlance, "networkPolicy: {ingress: [{namespaceSelector: {}}]}",
			"networkPolicy: {ingress: [{namespaceSelector: {}}], additionalEgress: [{ports: [{port: 9311}]}]}", 1), testBackend("a", "glance", true)),
	} {
		t.Run(name, func(t *testing.T) {
			rl, failed := runFnOn(t, input)
			if failed {
				t.Fatalf("failed: %v", rl.Results)
			}
			var files []string
			var policy networkingv1.NetworkPolicy
			for _, o := range rl.Items {
				switch {
				case o.GetKind() == "ConfigMap" && o.GetLabel(v1alpha1.LabelComponent) == v1alpha1.ComponentConfig:
					s, _, _ := o.NestedString("data", v1alpha1.KeyGlanceAPIConf)
					files = append(files, s)
				case o.GetKind() == "Secret" && o.GetLabel(v1alpha1.LabelComponent) == v1alpha1.ComponentBackends:
					s, _, _ := o.NestedString("stringData", v1alpha1.KeyBackendsConf)
					files = append(files, s)
				case o.GetKind() == "NetworkPolicy" && o.GetName() == "glance":
					if err := yaml.Unmarshal([]byte(o.String()), &policy); err != nil {
						t.Fatal(err)
					}
				}
			}
			if len(files) != 2 || policy.Name == "" {
				t.Fatalf("the render holds %d rendered files and policy %q", len(files), policy.Name)
			}
			admitted := map[int]bool{}
			for _, r := range policy.Spec.Egress {
				for _, p := range r.Ports {
					admitted[p.Port.IntValue()] = true
				}
			}
			want := endpointsOf(t, files)
			want = append(want, 3307) // spec.database.port
			for _, p := range want {
				if !admitted[p] {
					t.Errorf("port %d, which the rendered files contact, is not admitted by the NetworkPolicy (admitted %v)", p, admitted)
				}
			}
			if len(want) < 5 {
				t.Errorf("only %v read out of the rendered files", want)
			}
			warned := slices.ContainsFunc(rl.Results, func(r *fn.Result) bool {
				return r.Severity == fn.Warning && strings.Contains(r.Message, v1alpha1.ReasonEgressNotRendered) &&
					strings.Contains(r.Message, "spec.networkPolicy.additionalEgress")
			})
			if wantWarn := strings.Contains(name, "warns"); warned != wantWarn {
				t.Errorf("warning %s: %v, want %v (%v)", v1alpha1.ReasonEgressNotRendered, warned, wantWarn, rl.Results)
			}
		})
	}
}

var urlPattern = regexp.MustCompile(`[a-z][a-z0-9+.-]*://[^\s,/\]]+`)

// endpointsOf is every port the files name, read independently of the
// function's own reader.
func endpointsOf(t *testing.T, files []string) []int {
	t.Helper()
	defaults := map[string]int{"http": 80, "https": 443, "rabbit": 5672}
	var out []int
	for _, text := range files {
		f, err := ini.LoadSources(ini.LoadOptions{IgnoreInlineComment: true}, []byte(text))
		if err != nil {
			t.Fatal(err)
		}
		for _, sec := range f.Sections() {
			for _, k := range sec.Keys() {
				for _, m := range urlPattern.FindAllString(k.Value(), -1) {
					u, err := url.Parse(m)
					if err != nil {
						t.Fatalf("[%s] %s: %v", sec.Name(), k.Name(), err)
					}
					p, err := strconv.Atoi(u.Port())
					if err != nil {
						p = defaults[u.Scheme]
					}
					out = append(out, p)
				}
				if strings.HasSuffix(k.Name(), "_servers") {
					for _, hp := range strings.Split(k.Value(), ",") {
						_, ps, err := net.SplitHostPort(strings.TrimSpace(hp))
						if err != nil {
							t.Fatalf("[%s] %s = %q: %v", sec.Name(), k.Name(), k.Value(), err)
						}
						p, _ := strconv.Atoi(ps)
						out = append(out, p)
					}
				}
				if k.Name() == "allowed_ports" && strings.Contains(f.Section("DEFAULT").Key("enabled_import_methods").String(), "web-download") {
					for _, ps := range strings.FieldsFunc(k.Value(), func(r rune) bool { return r == '[' || r == ']' || r == ',' }) {
						p, err := strconv.Atoi(strings.TrimSpace(ps))
						if err != nil {
							t.Fatal(fmt.Errorf("allowed_ports %q: %w", k.Value(), err))
						}
						out = append(out, p)
					}
				}
			}
		}
	}
	return out
}
