package render

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/c5c3/glance-krm/fn/oslo"
	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

// Where the rendered files sit in the pod: the config volume is one
// directory, and oslo.config parses only its *.conf files, so the paste,
// policy and uWSGI files are named by the options that read them.
// uwsgiLogFormat is the request line of uWSGI's log, which glance-api's
// own log lacks under uWSGI.
const uwsgiLogFormat = "%(method) %(uri) => generated %(rsize) bytes in %(msecs) msecs (%(proto) %(status))"

const (
	PasteFile   = "glance-api-paste.ini"
	PolicyFile  = "policy.yaml"
	LoggingFile = "logging.conf"
	UWSGIFile   = "glance-api-uwsgi.ini"
)

// options is glance-api.conf before it is written: section -> option ->
// value.
type options map[string]map[string]string

func (o options) set(section, key, value string) {
	if o[section] == nil {
		o[section] = map[string]string{}
	}
	o[section][key] = value
}

// overlay writes every option of top over o.
func (o options) overlay(top options) {
	for s, kv := range top {
		for k, v := range kv {
			o.set(s, k, v)
		}
	}
}

// operatorDefaults are the options the seed operator renders for a Glance
// (its reconcile_config.go operatorDefaults, same values); the credentials
// are not among them here, as the init container writes them.
func operatorDefaults(g *v1alpha1.Glance, backends []*v1alpha1.GlanceBackend, defaultStore string, policy bool) options {
	s := &g.Spec
	o := options{}
	o.setDefaultSection(s, backends)
	o.set("database", "max_retries", "-1")
	o.set("database", "connection_recycle_time", "600")
	o.setKeystone(s)
	o.set("glance_store", "default_backend", defaultStore)
	o.set("os_glance_staging_store", "filesystem_store_datadir", v1alpha1.PodStagingDir)
	o.set("os_glance_tasks_store", "filesystem_store_datadir", v1alpha1.PodTasksDir)
	o.set("paste_deploy", "flavor", "keystone")
	o.set("paste_deploy", "config_file", v1alpha1.MountConfigDir+PasteFile)
	if policy {
		o.set("oslo_policy", "policy_file", v1alpha1.MountConfigDir+PolicyFile)
	}
	if s.SignatureVerification() {
		// Glance verifies image signatures with certificates kept in
		// barbican, which it finds through the internal Identity endpoint.
		o.set("key_manager", "backend", "barbican")
		o.set("barbican", "auth_endpoint", s.KeystoneEndpoint)
		o.set("barbican", "barbican_endpoint_type", "internal")
	}
	o.setImport(s)
	return o
}

// setDefaultSection is [DEFAULT]: the stores, the import methods, the
// workers and keep-alive of the eventlet server, logging, the image cache.
func (o options) setDefaultSection(s *v1alpha1.GlanceSpec, backends []*v1alpha1.GlanceBackend) {
	stores := make([]string, len(backends))
	for i, b := range backends {
		stores[i] = b.Name + ":s3"
	}
	logging := s.EffectiveLogging()
	o.set("DEFAULT", "enabled_backends", strings.Join(stores, ","))
	// glance-direct stages on one pod's disk, which another replica cannot
	// finish, so only the two methods that need no shared staging.
	o.set("DEFAULT", "enabled_import_methods", "[web-download,copy-image]")
	o.set("DEFAULT", "use_stderr", "true")
	o.set("DEFAULT", "debug", strconv.FormatBool(logging.Debug != nil && *logging.Debug))
	if s.APIServer != nil && s.APIServer.Workers != nil {
		o.set("DEFAULT", "workers", strconv.Itoa(int(*s.APIServer.Workers)))
	} else if !s.UsesUWSGI() {
		o.set("DEFAULT", "workers", strconv.Itoa(v1alpha1.DefaultEventletWorkers))
	}
	if !s.UsesUWSGI() {
		// The eventlet server's workers die on SIGTERM at once, so a
		// stopping pod waits until its connections are gone (the preStop
		// drain); a client's idle keep-alive connection would hold it the
		// whole grace period, and its next request on that connection
		// would fail once the pod stopped.
		o.set("DEFAULT", "http_keepalive", "false")
	}
	if len(logging.PerLoggerLevels) > 0 {
		o.set("DEFAULT", "default_log_levels", sortedPairs(logging.PerLoggerLevels, "="))
	}
	if logging.Format == "json" {
		o.set("DEFAULT", "log_config_append", v1alpha1.MountConfigDir+LoggingFile)
	}
	if s.ImageCache != nil {
		o.set("DEFAULT", "image_cache_dir", v1alpha1.PodImageCacheDir)
		o.set("DEFAULT", "image_cache_driver", "sqlite")
		o.set("DEFAULT", "image_cache_max_size", strconv.FormatInt(s.ImageCacheMaxSize(), 10))
	}
}

// setKeystone is [keystone_authtoken]: the service user, by password or
// application credential, and what validates tokens.
func (o options) setKeystone(s *v1alpha1.GlanceSpec) {
	ks := v1alpha1.SectionKeystone
	o.set(ks, "auth_url", s.KeystoneEndpoint)
	o.set(ks, "www_authenticate_uri", cmp.Or(s.KeystonePublicEndpoint, s.KeystoneEndpoint))
	if s.ServiceUser.ApplicationCredential != nil {
		// The id and secret come in the credentials file. An application
		// credential carries its own user and project: a scope beside it
		// makes Keystone refuse the token, so the user and project options
		// are written empty, over any that a packaged glance-api.conf sets.
		o.set(ks, "auth_type", "v3applicationcredential")
		for _, opt := range []string{"username", "project_name", "user_domain_name", "project_domain_name"} {
			o.set(ks, opt, "")
		}
	} else {
		o.set(ks, "auth_type", "password")
		o.set(ks, "username", s.ServiceUser.Username)
		o.set(ks, "project_name", s.ServiceUser.ProjectName)
		o.set(ks, "user_domain_name", s.ServiceUser.UserDomainName)
		o.set(ks, "project_domain_name", s.ServiceUser.ProjectDomainName)
	}
	// The service type the access rules of an application credential name:
	// without it authtoken cannot check a restricted credential's rules
	// and refuses its token (401) with a warning in Glance's log. The seed
	// leaves it out; RHOSO's glance-operator renders it (docs/seed.md).
	o.set(ks, "service_type", "image")
	if s.Region != "" {
		o.set(ks, "region_name", s.Region)
	}
	if servers := s.MemcachedServers(); len(servers) > 0 {
		o.set(ks, "memcached_servers", strings.Join(servers, ","))
	}
}

// setImport is the import filtering and plugins.
func (o options) setImport(s *v1alpha1.GlanceSpec) {
	// All six filter lists are written, the empty ones as "[]": an absent
	// option is glance's own default, which is wider. They are bounded
	// ListOpts, so the brackets are required.
	f := s.EffectiveImportFiltering()
	o.set("import_filtering_opts", "allowed_schemes", bracketed(f.AllowedSchemes))
	o.set("import_filtering_opts", "disallowed_schemes", bracketed(f.DisallowedSchemes))
	o.set("import_filtering_opts", "allowed_hosts", bracketed(f.AllowedHosts))
	o.set("import_filtering_opts", "disallowed_hosts", bracketed(f.DisallowedHosts))
	o.set("import_filtering_opts", "allowed_ports", bracketed(ports(f.AllowedPorts)))
	o.set("import_filtering_opts", "disallowed_ports", bracketed(ports(f.DisallowedPorts)))
	o.set("image_import_opts", "image_import_plugins", bracketed(s.ImportPluginNames()))
	if p := s.ImportPlugins; p != nil && p.Conversion != nil {
		o.set("image_conversion", "output_format", cmp.Or(p.Conversion.OutputFormat, v1alpha1.DefaultImportConversionOutputFormat))
	}
	if p := s.ImportPlugins; p != nil && p.InjectMetadata != nil {
		roles := p.InjectMetadata.IgnoreUserRoles
		if roles == nil {
			roles = v1alpha1.DefaultImportInjectIgnoreUserRoles
		}
		o.set("inject_metadata_properties", "inject", sortedPairs(p.InjectMetadata.Properties, ":"))
		// ignore_user_roles is an unbounded ListOpt: brackets would become
		// part of the first and last role.
		o.set("inject_metadata_properties", "ignore_user_roles", strings.Join(roles, ","))
	}
}

// renderAPIConf renders glance-api.conf in the seed operator's merge order:
// plugin sections, then the operator's options over them, then extraConfig
// over everything (the options a typed field owns are refused before this).
// The default store lives here, so a default flip renames the ConfigMap
// only.
func renderAPIConf(g *v1alpha1.Glance, backends []*v1alpha1.GlanceBackend, defaultStore string, policy bool) *oslo.File {
	o := options{}
	for _, p := range g.Spec.Plugins {
		for k, v := range p.Config {
			o.set(p.ConfigSection, k, v)
		}
	}
	o.overlay(operatorDefaults(g, backends, defaultStore, policy))
	for section, kv := range g.Spec.ExtraConfig {
		for k, v := range kv {
			o.set(section, k, string(v))
		}
	}
	return o.file(
		fmt.Sprintf("Rendered by glance-krm from Glance %s. Do not edit.", v1alpha1.NamespacedName(g.Namespace, g.Name)),
		"The service password and the database connection are not here: at pod start the glance-krm-credentials init container writes them from their Secrets to "+v1alpha1.MountCredentialsDir+".",
	)
}

// file writes the options DEFAULT first, as oslo.config's own samples
// have it, then every other section and every option by name.
func (o options) file(header ...string) *oslo.File {
	f := &oslo.File{Header: header}
	for _, section := range sectionOrder(o) {
		sec := oslo.Section{Name: section}
		for _, k := range slices.Sorted(maps.Keys(o[section])) {
			sec.Set(k, o[section][k])
		}
		f.Sections = append(f.Sections, sec)
	}
	return f
}

func sectionOrder(o options) []string {
	names := slices.Sorted(maps.Keys(o))
	if i := slices.Index(names, "DEFAULT"); i > 0 {
		names = append([]string{"DEFAULT"}, slices.Delete(names, i, i+1)...)
	}
	return names
}

func bracketed(items []string) string { return "[" + strings.Join(items, ",") + "]" }

func ports(ps []int32) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = strconv.Itoa(int(p))
	}
	return out
}

func sortedPairs(m map[string]string, sep string) string {
	pairs := make([]string, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		pairs = append(pairs, k+sep+m[k])
	}
	return strings.Join(pairs, ",")
}
