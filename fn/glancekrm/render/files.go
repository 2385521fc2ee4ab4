package render

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

// The files beside glance-api.conf in the config ConfigMap, each as the
// seed operator renders it (C5C3/cobaltcore operators/glance at da0515f:
// renderPasteINI, buildPolicyYAML, RenderLoggingConf, BuildUWSGICommand).

// plainINI writes sections and keys sorted, "key = value", for readers
// that are not oslo.config (PasteDeploy, logging.fileConfig, uWSGI).
func plainINI(sections map[string]map[string]string) string {
	var b strings.Builder
	for i, name := range slices.Sorted(maps.Keys(sections)) {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "[%s]\n", name)
		for _, k := range slices.Sorted(maps.Keys(sections[name])) {
			fmt.Fprintf(&b, "%s = %s\n", k, sections[name][k])
		}
	}
	return b.String()
}

// renderPasteINI is glance-api-paste.ini: the keystone flavor is a root
// composite that serves /healthcheck as an app, outside authtoken (a
// healthcheck filter crashes glance 2026.1), and the API through
// cors, http_proxy_to_wsgi, versionnegotiation, authtoken and context,
// with spec.middleware before or after them and the image cache filter
// last when spec.imageCache is set.
func renderPasteINI(s *v1alpha1.GlanceSpec) string {
	mw := slices.Clone(s.Middleware)
	if s.ImageCache != nil {
		mw = append(mw, v1alpha1.MiddlewareSpec{Name: "cache", FilterFactory: "glance.api.middleware.cache:CacheFilter.factory", Position: "after"})
	}
	var before, after []string
	sections := map[string]map[string]string{}
	for _, m := range mw {
		if m.Position == "before" {
			before = append(before, m.Name)
		} else {
			after = append(after, m.Name)
		}
		f := map[string]string{}
		maps.Copy(f, m.Config)
		f["paste.filter_factory"] = m.FilterFactory
		sections["filter:"+m.Name] = f
	}
	pipeline := slices.Concat(before, []string{"cors", "http_proxy_to_wsgi", "versionnegotiation", "authtoken", "context"}, after, []string{"rootapp"})
	sections["pipeline:api"] = map[string]string{"pipeline": strings.Join(pipeline, " ")}
	for name, sec := range map[string]map[string]string{
		"composite:glance-api-keystone": {"paste.composite_factory": "glance.api:root_app_factory", "/": "api", "/healthcheck": "healthcheck"},
		"composite:rootapp":             {"paste.composite_factory": "glance.api:root_app_factory", "/": "apiversions", "/v2": "apiv2app"},
		"app:healthcheck":               {"paste.app_factory": "oslo_middleware:Healthcheck.app_factory", "backends": "disable_by_file", "disable_by_file_path": "/etc/glance/healthcheck_disable"},
		"app:apiversions":               {"paste.app_factory": "glance.api.versions:create_resource"},
		"app:apiv2app":                  {"paste.app_factory": "glance.api.v2.router:API.factory"},
		"filter:cors":                   {"paste.filter_factory": "oslo_middleware.cors:filter_factory", "oslo_config_project": "glance", "oslo_config_program": "glance-api"},
		"filter:http_proxy_to_wsgi":     {"paste.filter_factory": "oslo_middleware:HTTPProxyToWSGI.factory"},
		"filter:versionnegotiation":     {"paste.filter_factory": "glance.api.middleware.version_negotiation:VersionNegotiationFilter.factory"},
		"filter:authtoken":              {"paste.filter_factory": "keystonemiddleware.auth_token:filter_factory", "delay_auth_decision": "true"},
		"filter:context":                {"paste.filter_factory": "glance.api.middleware.context:ContextMiddleware.factory"},
	} {
		sections[name] = sec
	}
	return plainINI(sections)
}

// renderPolicyYAML writes the rules sorted by name, one YAML mapping entry
// each; "" when there are none.
func renderPolicyYAML(rules map[string]string) (string, error) {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(rules)) {
		out, err := yaml.Marshal(map[string]string{k: rules[k]})
		if err != nil {
			return "", fmt.Errorf("policy rule %q: %w", k, err)
		}
		b.Write(out)
	}
	return b.String(), nil
}

// renderLoggingConf is the logging.fileConfig file for format json: the
// root logger to stderr through oslo.log's JSONFormatter, and a logger per
// spec.logging.perLoggerLevels entry. Once log_config_append names this
// file, oslo.log applies neither [DEFAULT] debug nor default_log_levels,
// so both live here: the root logger's level is DEBUG with debug, else
// spec.logging.level. The loggers' keys are l0, l1, ... in name order
// (a name is only their qualname, where fileConfig's %-interpolation
// needs a % doubled).
func renderLoggingConf(l v1alpha1.LoggingSpec) string {
	root := l.Level
	if l.Debug != nil && *l.Debug {
		root = "DEBUG"
	}
	names := slices.Sorted(maps.Keys(l.PerLoggerLevels))
	keys := []string{"root"}
	var loggers []string
	for i, name := range names {
		key := fmt.Sprintf("l%d", i)
		keys = append(keys, key)
		loggers = append(loggers, "[logger_"+key+"]", "level = "+l.PerLoggerLevels[name], "handlers =",
			"qualname = "+strings.ReplaceAll(name, "%", "%%"), "propagate = 1", "")
	}
	return strings.Join(slices.Concat([]string{
		"[loggers]", "keys = " + strings.Join(keys, ", "), "",
		"[handlers]", "keys = stderr", "",
		"[formatters]", "keys = json", "",
		"[logger_root]", "level = " + root, "handlers = stderr", "",
	}, loggers, []string{
		"[handler_stderr]", "class = StreamHandler", "args = (sys.stderr,)", "level = NOTSET", "formatter = json", "",
		"[formatter_json]", "class = oslo_log.formatters.JSONFormatter", "",
	}), "\n")
}

// renderUWSGIINI is the whole uWSGI configuration of glance-api from
// 2026.1 (where it runs under uWSGI), so that the workload's command is
// only `uwsgi --ini <it>` and runs on any image that has glance and uWSGI:
//
//   - plugins http,python3: Debian's uWSGI loads both as plugins; one that
//     has them built in says it cannot load them and goes on;
//   - module glance.wsgi.api:application: glance's own WSGI module (every
//     release from 2025.1 ships it; the glance-wsgi-api script is gone from
//     2026.1), not a path inside one image;
//   - concurrency: an image upload or download holds a worker thread for
//     its whole transfer (glance streams the body through its store driver
//     in that thread), and so does every probe, so processes × threads is
//     how many transfers and probes run at once. Threads, not processes,
//     are the cheap unit (each process loads glance, about 150 MiB); the
//     default is DefaultUWSGIProcesses × DefaultUWSGIThreads;
//   - the HTTP router (http :9292) takes chunked uploads
//     (http-chunked-input, chunked-input-limit) and large Keystone tokens
//     (buffer-size), and answers Connection: close: uWSGI 2.0's router
//     closes a keep-alive connection after a request with a body, so a
//     client's next request on it fails (measured on the node; unbit/uwsgi
//     #2133). spec.apiServer.uwsgi.httpKeepAlive: true turns keep-alive on
//     all the same, with a warning;
//   - SIGTERM: uWSGI 2.0 reloads on it unless die-on-term; the master-start
//     hook turns it into a graceful shutdown (running requests finish, for
//     at most worker-reload-mercy seconds, inside the pod's grace period).
func renderUWSGIINI(s *v1alpha1.GlanceSpec) string {
	var u v1alpha1.UWSGISpec
	if s.APIServer != nil && s.APIServer.UWSGI != nil {
		u = *s.APIServer.UWSGI
	}
	opts := map[string]string{
		"plugins":             "http,python3",
		"module":              "glance.wsgi.api:application",
		"http":                fmt.Sprintf(":%d", v1alpha1.APIPort),
		"http-auto-chunked":   "true",
		"http-chunked-input":  "true",
		"chunked-input-limit": strconv.Itoa(64 << 20),
		"buffer-size":         "65535",
		"log-master":          "true",
		"log-format":          uwsgiLogFormat,
		"master":              "true",
		"lazy-apps":           "true",
		"need-app":            "true",
		"enable-threads":      "true",
		"die-on-term":         "true",
		"hook-master-start":   "unix_signal:15 gracefully_kill_them_all",
		"worker-reload-mercy": strconv.FormatInt(s.DrainSeconds(), 10),
		"processes":           strconv.Itoa(int(cmp.Or(u.Processes, v1alpha1.DefaultUWSGIProcesses))),
		"threads":             strconv.Itoa(int(cmp.Or(u.Threads, v1alpha1.DefaultUWSGIThreads))),
	}
	if u.HTTPKeepAlive != nil && *u.HTTPKeepAlive {
		opts["http-keepalive"] = "true"
		if u.HTTPKeepAliveTimeout != nil && *u.HTTPKeepAliveTimeout > 0 {
			opts["http-keepalive-timeout"] = strconv.Itoa(int(*u.HTTPKeepAliveTimeout))
		}
	} else {
		opts["add-header"] = "Connection: close"
	}
	if u.Harakiri != nil && *u.Harakiri > 0 {
		opts["harakiri"] = strconv.Itoa(int(*u.Harakiri))
	}
	return plainINI(map[string]map[string]string{"uwsgi": opts})
}

// configFiles are the config ConfigMap's files.
func configFiles(s *v1alpha1.GlanceSpec, apiConf string, policy map[string]string) (map[string]string, error) {
	files := map[string]string{v1alpha1.KeyGlanceAPIConf: apiConf, PasteFile: renderPasteINI(s)}
	if len(policy) > 0 {
		p, err := renderPolicyYAML(policy)
		if err != nil {
			return nil, err
		}
		files[PolicyFile] = p
	}
	if l := s.EffectiveLogging(); l.Format == "json" {
		files[LoggingFile] = renderLoggingConf(l)
	}
	if s.UsesUWSGI() {
		files[UWSGIFile] = renderUWSGIINI(s)
	}
	return files, nil
}
