package v1alpha1

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/utils/ptr"

	"k8s.io/apimachinery/pkg/api/resource"
)

// Defaults the seed operator resolves at render time rather than storing
// them in the object (C5C3/cobaltcore operators/glance at da0515f,
// glance_webhook.go and reconcile_config.go): an unset field keeps
// following them.
var (
	DefaultImportAllowedSchemes  = []string{"https"}
	DefaultImportAllowedPorts    = []int32{443}
	DefaultImportDisallowedHosts = []string{
		"localhost", "127.0.0.1", "0.0.0.0", "::1", "169.254.169.254",
		"kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local",
	}
	DefaultImportInjectIgnoreUserRoles = []string{"admin"}
	DefaultStagingSizeLimit            = resource.MustParse("10Gi")
	DefaultImageCacheSizeLimit         = resource.MustParse("10Gi")
)

const (
	DefaultImportConversionOutputFormat = "raw"
	DefaultEventletWorkers              = 2
	DefaultImageCacheMaintenance        = 5 * time.Minute
	DefaultDBPurgeRetentionDays         = 30
	DefaultDBPurgeSchedule              = "1 0 * * *"
	DefaultCacheBackend                 = "dogpile.cache.pymemcache"
	DefaultDatabasePort                 = 3306
	DefaultMemcachedPort                = 11211
	DefaultUWSGIProcesses               = 2
	// DefaultUWSGIThreads: a transfer holds a uWSGI thread throughout, so
	// 2 × 16 runs 32 transfers and probes at once (the seed's 1 ran two,
	// and a third request, a probe among them, waited behind them).
	DefaultUWSGIThreads = 16
	// UWSGIFromRelease is the first release glance-api runs under uWSGI.
	UWSGIFromRelease = "2026.1"
	// The seed's termination grace and preStop sleep of the workload
	// (spec.deployment leaves them unset).
	DefaultTerminationGraceSeconds = int64(30)
	DefaultPreStopSleepSeconds     = int64(5)
)

// UsesUWSGI tells whether the release launches glance-api under uWSGI
// (2026.1 and later) rather than the eventlet server.
func (s *GlanceSpec) UsesUWSGI() bool {
	return ReleaseAtLeast(s.OpenStackRelease, 2026, 1)
}

// WSGIReadsServerDir tells whether glance, served by a WSGI server, reads
// its per-program config directory under the server's name: before 33
// (2026.2) glance's WSGI entry point calls oslo.config without a program
// name, which then takes sys.argv[0], "uwsgi" under uWSGI (measured), so
// it reads /etc/glance/uwsgi.conf.d/ and never glance-api.conf.d/
// (LP #2098514, fixed in glance 33).
func (s *GlanceSpec) WSGIReadsServerDir() bool {
	return !ReleaseAtLeast(s.OpenStackRelease, 2026, 2)
}

// ReleaseAtLeast tells whether a release series (YYYY.N) is the given one
// or later; an unparseable one is not.
func ReleaseAtLeast(release string, year, minor int) bool {
	var y, m int
	if _, err := fmt.Sscanf(release, "%d.%d", &y, &m); err != nil {
		return false
	}
	return y > year || (y == year && m >= minor)
}

// EffectiveLogging is spec.logging with its defaults.
func (s *GlanceSpec) EffectiveLogging() LoggingSpec {
	out := LoggingSpec{}
	if s.Logging != nil {
		out = *s.Logging
	}
	if out.Format == "" {
		out.Format = "text"
	}
	if out.Level == "" {
		out.Level = "INFO"
	}
	return out
}

// EffectiveImportFiltering resolves the six lists: nil takes the default,
// an explicitly empty list stays empty, and hosts a user denies are added
// to the default denylist, never instead of it.
func (s *GlanceSpec) EffectiveImportFiltering() ImportFilteringSpec {
	var out ImportFilteringSpec
	if s.ImportFiltering != nil {
		out = *s.ImportFiltering
	}
	if out.AllowedSchemes == nil {
		out.AllowedSchemes = DefaultImportAllowedSchemes
	}
	if out.AllowedPorts == nil {
		out.AllowedPorts = DefaultImportAllowedPorts
	}
	if len(out.AllowedHosts) == 0 {
		switch {
		case out.DisallowedHosts == nil:
			out.DisallowedHosts = DefaultImportDisallowedHosts
		case len(out.DisallowedHosts) > 0:
			out.DisallowedHosts = union(DefaultImportDisallowedHosts, out.DisallowedHosts)
		}
	}
	return out
}

func union(base, extra []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, l := range [][]string{base, extra} {
		for _, h := range l {
			if !seen[h] {
				seen[h] = true
				out = append(out, h)
			}
		}
	}
	return out
}

// ImportPluginNames are the enabled plugins in the order glance runs them:
// decompression before conversion, by construction.
func (s *GlanceSpec) ImportPluginNames() []string {
	p := s.ImportPlugins
	if p == nil {
		return nil
	}
	var out []string
	if p.Decompression != nil {
		out = append(out, "image_decompression")
	}
	if p.Conversion != nil {
		out = append(out, "image_conversion")
	}
	if p.InjectMetadata != nil {
		out = append(out, "inject_image_metadata")
	}
	return out
}

// ImageCacheMaxSize is [DEFAULT] image_cache_max_size: 80% of the cache
// volume's bound (divided first, so it never rounds above 80%), leaving
// the pruner headroom below the kubelet's eviction threshold.
func (s *GlanceSpec) ImageCacheMaxSize() int64 {
	limit := DefaultImageCacheSizeLimit
	if s.ImageCache != nil && s.ImageCache.SizeLimit != nil {
		limit = *s.ImageCache.SizeLimit
	}
	return limit.Value() / 10 * 8
}

// MemcachedServers is [keystone_authtoken] memcached_servers: the servers,
// else the managed cluster's Service on the memcached port.
func (s *GlanceSpec) MemcachedServers() []string {
	if len(s.Cache.Servers) > 0 {
		return s.Cache.Servers
	}
	if s.Cache.ClusterRef != nil {
		return []string{fmt.Sprintf("%s:%d", s.Cache.ClusterRef.Name, DefaultMemcachedPort)}
	}
	return nil
}

// DatabasePort is spec.database.port with its default.
func (d *DatabaseSpec) DatabasePort() int32 {
	if d.Port > 0 {
		return d.Port
	}
	return DefaultDatabasePort
}

// UsernameFromSecret tells whether the username comes from the Secret's
// username key: outside Static managed mode, where it is the Glance's name.
func (d *DatabaseSpec) UsernameFromSecret() bool {
	return d.ClusterRef == nil || d.CredentialsMode == "Dynamic"
}

// Ref is the image reference the pods run: repository@digest when a
// digest is set (the tag is then only documentation), else repository:tag.
func (i ImageSpec) Ref() string {
	if i.Digest != "" {
		return i.Repository + "@" + i.Digest
	}
	return i.Repository + ":" + i.Tag
}

// TerminationGraceSeconds is the pods' termination grace period.
func (s *GlanceSpec) TerminationGraceSeconds() int64 {
	return ptr.Deref(s.Deployment.TerminationGracePeriodSeconds, DefaultTerminationGraceSeconds)
}

// PreStopSleepSeconds is how long a stopping pod sleeps while the
// endpoints drop it, before it drains.
func (s *GlanceSpec) PreStopSleepSeconds() int64 {
	return ptr.Deref(s.Deployment.PreStopSleepSeconds, DefaultPreStopSleepSeconds)
}

// DrainSeconds is how long a stopping pod waits for its running requests:
// the grace period less the preStop sleep and five seconds to exit in.
// The preStop hook waits this long, and uWSGI's worker-reload-mercy too.
func (s *GlanceSpec) DrainSeconds() int64 {
	return max(1, s.TerminationGraceSeconds()-s.PreStopSleepSeconds()-5)
}

// EffectiveDebug is [DEFAULT] debug as glance-api reads it: spec.logging.debug,
// unless spec.extraConfig sets the option (which the rendered file then
// holds); field is where it was set ("" when it is off by default).
func (s *GlanceSpec) EffectiveDebug() (field string, on bool) {
	if v, set := s.ExtraConfig["DEFAULT"]["debug"]; set {
		// oslo.config's Boolean: these words, in any case; anything else
		// fails glance-api's start, which the release rules do not judge.
		return "spec.extraConfig[DEFAULT][debug]", slices.Contains([]string{"true", "1", "on", "yes"}, strings.ToLower(strings.TrimSpace(string(v))))
	}
	if s.Logging != nil && s.Logging.Debug != nil {
		return "spec.logging.debug", *s.Logging.Debug
	}
	return "", false
}
