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
// like a typed one): by TCP port, which is how the API's NetworkPolicy
// admits them (its contacts are many, and most hosts cannot be named by a
// policy). Contacts are the same, each with its host and the option that
// names it, for a policy that names the few destinations it needs (the
// store drain's). Unknown are the contacts whose port no rendered file
// holds; the NetworkPolicy's owner admits them with
// spec.networkPolicy.additionalEgress.
type Egress struct {
	Ports    []int32
	Contacts []Contact
	Unknown  []string
}

// Contact is a host glance-api contacts on a TCP port, as an option of a
// rendered file names it: Section and Key are the option's, URL tells a
// URL value from an entry of a host:port list (a *_servers option).
type Contact struct {
	Section, Key, Host string
	Port               int32
	URL                bool
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
				e.add(sec.Name, o.Key, o.Value)
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

func (e *Egress) add(section, key, value string) {
	for _, tok := range strings.FieldsFunc(value, func(r rune) bool { return r == ',' || r == ' ' }) {
		// A list's brackets go; an IPv6 address's ([fd00::7]:7480) stay.
		if strings.Count(tok, "[") > strings.Count(tok, "]") {
			tok = strings.TrimPrefix(tok, "[")
		}
		if strings.Count(tok, "]") > strings.Count(tok, "[") {
			tok = strings.TrimSuffix(tok, "]")
		}
		if strings.Contains(tok, "://") {
			if u, err := url.Parse(tok); err == nil && u.Hostname() != "" {
				p, ok := portOf(u.Port())
				if !ok {
					p, ok = schemePorts[strings.ToLower(u.Scheme)]
				}
				if ok {
					e.contact(Contact{Section: section, Key: key, Host: u.Hostname(), Port: p, URL: true})
				}
			}
			continue
		}
		if strings.HasSuffix(key, "_servers") {
			if host, ps, err := net.SplitHostPort(strings.TrimPrefix(strings.TrimPrefix(tok, "inet:"), "inet6:")); err == nil {
				if p, ok := portOf(ps); ok {
					e.contact(Contact{Section: section, Key: key, Host: host, Port: p})
				}
			} else if key == "memcached_servers" || key == "memcache_servers" {
				e.contact(Contact{Section: section, Key: key, Host: strings.TrimPrefix(strings.TrimPrefix(tok, "inet:"), "inet6:"), Port: v1alpha1.DefaultMemcachedPort})
			}
		}
	}
}

func (e *Egress) contact(c Contact) {
	e.Ports = append(e.Ports, c.Port)
	e.Contacts = append(e.Contacts, c)
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
		for _, c := range e.Contacts {
			if !slices.Contains(out.Contacts, c) {
				out.Contacts = append(out.Contacts, c)
			}
		}
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
