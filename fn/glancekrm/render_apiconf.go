package glancekrm

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

// Options glance-krm sets that extraConfig may override: the paste
// pipeline (keystone+cachemanagement, say) and where the reserved staging
// and tasks stores keep their files.
var overridableDefaults = map[v1alpha1.ConfigOption]string{
	{Section: "paste_deploy", Key: "flavor"}:                              "keystone",
	{Section: "os_glance_staging_store", Key: "filesystem_store_datadir"}: "/var/lib/glance/staging/",
	{Section: "os_glance_tasks_store", Key: "filesystem_store_datadir"}:   "/var/lib/glance/tasks/",
}

// renderAPIConf renders glance-api.conf. The default store lives here, so a
// default flip changes this file (and the ConfigMap's hashed name) only.
// The service password and the database connection are not rendered: the
// credentials init container writes them at pod start.
func renderAPIConf(g *v1alpha1.Glance, backends []*v1alpha1.GlanceBackend, defaultStore string) *iniFile {
	opts := map[string]map[string]string{}
	set := func(section, key, value string) {
		if opts[section] == nil {
			opts[section] = map[string]string{}
		}
		opts[section][key] = value
	}

	stores := make([]string, len(backends))
	for i, b := range backends {
		stores[i] = b.Name + ":s3"
	}
	set("DEFAULT", "enabled_backends", strings.Join(stores, ","))
	set("glance_store", "default_backend", defaultStore)

	s := &g.Spec
	ks := "keystone_authtoken"
	set(ks, "auth_type", "password")
	set(ks, "auth_url", s.KeystoneEndpoint)
	set(ks, "www_authenticate_uri", cmp.Or(s.KeystonePublicEndpoint, s.KeystoneEndpoint))
	set(ks, "username", s.ServiceUser.Username)
	set(ks, "project_name", s.ServiceUser.ProjectName)
	set(ks, "user_domain_name", s.ServiceUser.UserDomainName)
	set(ks, "project_domain_name", s.ServiceUser.ProjectDomainName)
	if s.Region != "" {
		set(ks, "region_name", s.Region)
	}
	if s.Cache != nil && len(s.Cache.Servers) > 0 {
		set(ks, "memcached_servers", strings.Join(s.Cache.Servers, ","))
	}

	overridden := map[v1alpha1.ConfigOption]bool{}
	for section, kv := range s.ExtraConfig {
		for k, v := range kv {
			set(section, k, string(v))
			overridden[v1alpha1.ConfigOption{Section: section, Key: k}.Normalize()] = true
		}
	}
	for o, v := range overridableDefaults {
		if !overridden[o] {
			set(o.Section, o.Key, v)
		}
	}

	f := &iniFile{header: []string{
		fmt.Sprintf("Rendered by glance-krm from Glance %s. Do not edit.", nsName(g.Namespace, g.Name)),
		"The service password and the database connection are not here: at pod start the glance-krm-credentials init container writes them from their Secrets to " + v1alpha1.MountCredentialsDir + ".",
	}}
	for _, section := range sectionOrder(opts) {
		sec := iniSection{name: section}
		keys := make([]string, 0, len(opts[section]))
		for k := range opts[section] {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			sec.set(k, opts[section][k])
		}
		f.sections = append(f.sections, sec)
	}
	return f
}

// sectionOrder is DEFAULT first, as oslo.config's own samples have it, then
// every other section by name.
func sectionOrder(opts map[string]map[string]string) []string {
	names := make([]string, 0, len(opts))
	for n := range opts {
		if n != "DEFAULT" {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	if _, ok := opts["DEFAULT"]; ok {
		names = append([]string{"DEFAULT"}, names...)
	}
	return names
}
