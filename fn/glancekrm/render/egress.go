package render

import (
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/c5c3/glance-krm/fn/oslo"
	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

// Egress is what glance-api will contact, read out of its rendered files
// (so an endpoint added through extraConfig or extraOptions is admitted
// like a typed one), as a NetworkPolicy can admit it: by TCP port, since
// a policy cannot name a host. Unknown are the contacts whose port no
// rendered file holds; the NetworkPolicy's owner admits them with
// spec.networkPolicy.additionalEgress.
type Egress struct {
	Ports   []int32
	Unknown []string
}

// schemePorts are the ports a URL without one reaches.
var schemePorts = map[string]int32{
	"http": 80, "https": 443, "mysql": 3306, "mysql+pymysql": 3306, "postgresql": 5432,
	"rabbit": 5672, "amqp": 5672, "kafka": 9092, "redis": 6379, "memcached": 11211,
}

// egressOf reads every option of the files: each URL value reaches its
// port (or its scheme's), each host:port list entry of a *_servers option
// its port. The database connection is composed in the pod from a Secret
// (never rendered), so its port is the spec's; DNS is always needed. Two
// contacts no file holds are reported: barbican, found through Keystone's
// catalog when no barbican_endpoint is set, and web-download from any
// port when allowed_ports is empty.
func egressOf(s *v1alpha1.GlanceSpec, files ...*oslo.File) Egress {
	e := Egress{Ports: []int32{s.Database.DatabasePort()}}
	opt := map[string]string{}
	for _, f := range files {
		for _, sec := range f.Sections {
			for _, o := range sec.Options {
				opt["["+sec.Name+"] "+o.Key] = o.Value
				e.add(o.Key, o.Value)
			}
		}
	}
	if opt["[key_manager] backend"] == "barbican" && opt["[barbican] barbican_endpoint"] == "" {
		e.Unknown = append(e.Unknown, "barbican (image signature verification), whose endpoint glance finds in Keystone's catalog")
	}
	if strings.Contains(opt["[DEFAULT] enabled_import_methods"], "web-download") {
		ports := strings.FieldsFunc(opt["[import_filtering_opts] allowed_ports"], func(r rune) bool { return r == ',' || r == '[' || r == ']' || r == ' ' })
		if len(ports) == 0 {
			e.Unknown = append(e.Unknown, "web-download, whose allowed_ports is empty: any port")
		}
		for _, tok := range ports {
			if p, ok := portOf(tok); ok {
				e.Ports = append(e.Ports, p)
			}
		}
	}
	slices.Sort(e.Ports)
	e.Ports = slices.Compact(e.Ports)
	return e
}

func (e *Egress) add(key, value string) {
	for _, tok := range strings.FieldsFunc(value, func(r rune) bool { return r == ',' || r == ' ' || r == '[' || r == ']' }) {
		if strings.Contains(tok, "://") {
			if u, err := url.Parse(tok); err == nil && u.Hostname() != "" {
				if p, ok := portOf(u.Port()); ok {
					e.Ports = append(e.Ports, p)
				} else if p, ok := schemePorts[strings.ToLower(u.Scheme)]; ok {
					e.Ports = append(e.Ports, p)
				}
			}
			continue
		}
		if strings.HasSuffix(key, "_servers") {
			if _, ps, err := net.SplitHostPort(strings.TrimPrefix(tok, "inet:")); err == nil {
				if p, ok := portOf(ps); ok {
					e.Ports = append(e.Ports, p)
				}
			} else if key == "memcached_servers" || key == "memcache_servers" {
				e.Ports = append(e.Ports, v1alpha1.DefaultMemcachedPort)
			}
		}
	}
}

func portOf(s string) (int32, bool) {
	n, err := strconv.ParseInt(s, 10, 32)
	return int32(n), err == nil && n > 0 && n <= 65535
}

// Union is the contacts of several APIs' files.
func Union(es ...Egress) Egress {
	var out Egress
	for _, e := range es {
		out.Ports = append(out.Ports, e.Ports...)
		for _, u := range e.Unknown {
			if !slices.Contains(out.Unknown, u) {
				out.Unknown = append(out.Unknown, u)
			}
		}
	}
	slices.Sort(out.Ports)
	out.Ports = slices.Compact(out.Ports)
	return out
}
