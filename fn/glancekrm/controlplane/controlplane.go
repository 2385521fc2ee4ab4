// Package controlplane is the ControlPlane stage: a c5c3 ControlPlane
// (C5C3/cobaltcore operators/c5c3, c5c3.io/v1alpha1) with spec.services.glance projects, at
// build time, the Glance <cp>-glance and one GlanceBackend
// <cp>-glance-<entry> per backends[] entry, as the c5c3 operator's
// reconcile_glance.go projects them; the children are then rendered like
// hand-written objects in the same run. The ControlPlane itself passes
// through untouched. Only what the Glance children read is decoded; every
// other field of the ControlPlane is the c5c3 operator's business.
package controlplane

import (
	"cmp"
	"fmt"
	"maps"
	"net/url"
	"strings"

	"github.com/c5c3/glance-krm/fn/glancekrm/ynode"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

const (
	controlPlaneAPIVersion  = "c5c3.io/v1alpha1"
	controlPlaneKind        = "ControlPlane"
	labelControlPlaneName   = "c5c3.io/controlplane-name"
	labelControlPlaneNS     = "c5c3.io/controlplane-namespace"
	defaultGlanceRepository = "ghcr.io/c5c3/glance"
	defaultAdminDomain      = "Default"
	defaultRegion           = "RegionOne"
	maxObjectName           = 253
	MsgControlPlaneDefaults = "exactly one backends entry must set isDefault"
)

type controlPlane struct {
	Metadata struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"metadata"`
	Spec struct {
		OpenStackRelease  string                       `json:"openStackRelease"`
		Region            string                       `json:"region"`
		SecretStoreRef    *v1alpha1.SecretStoreRefSpec `json:"secretStoreRef"`
		GlobalExtraConfig map[string]map[string]string `json:"globalExtraConfig"`
		Infrastructure    *struct {
			Database v1alpha1.DatabaseSpec `json:"database"`
			Cache    v1alpha1.CacheSpec    `json:"cache"`
		} `json:"infrastructure"`
		KORC struct {
			AdminCredential struct {
				DomainName string `json:"domainName"`
			} `json:"adminCredential"`
		} `json:"korc"`
		Services struct {
			Keystone *struct {
				Mode           string                     `json:"mode"`
				PublicEndpoint string                     `json:"publicEndpoint"`
				Gateway        *struct{ Hostname string } `json:"gateway"`
				Namespace      *struct {
					Name string `json:"name"`
				} `json:"namespace"`
				TargetClusterRef *v1alpha1.ClusterRefSpec `json:"targetClusterRef"`
			} `json:"keystone"`
			Glance *controlPlaneGlance `json:"glance"`
		} `json:"services"`
	} `json:"spec"`
}

type controlPlaneGlance struct {
	PublicEndpoint           string                        `json:"publicEndpoint"`
	Replicas                 *int32                        `json:"replicas"`
	Image                    *v1alpha1.ImageSpec           `json:"image"`
	Gateway                  *v1alpha1.GatewaySpec         `json:"gateway"`
	Backends                 []controlPlaneBackend         `json:"backends"`
	ImportFiltering          *v1alpha1.ImportFilteringSpec `json:"importFiltering"`
	Staging                  *v1alpha1.StagingSpec         `json:"staging"`
	ImageCache               *v1alpha1.ImageCacheSpec      `json:"imageCache"`
	ImportPlugins            *v1alpha1.ImportPluginsSpec   `json:"importPlugins"`
	DatabaseCredentialsMode  string                        `json:"databaseCredentialsMode"`
	ExtraConfig              map[string]map[string]string  `json:"extraConfig"`
	DedicatedBackingServices *struct {
		Database *v1alpha1.DatabaseSpec `json:"database"`
		Cache    *v1alpha1.CacheSpec    `json:"cache"`
	} `json:"dedicatedBackingServices"`
	Namespace *struct {
		Name string `json:"name"`
	} `json:"namespace"`
	TargetClusterRef *v1alpha1.ClusterRefSpec `json:"targetClusterRef"`
}

type controlPlaneBackend struct {
	Name      string `json:"name"`
	Type      string `json:"type"`
	IsDefault bool   `json:"isDefault"`
	S3        *struct {
		Endpoint             string `json:"endpoint"`
		Bucket               string `json:"bucket"`
		Region               string `json:"region"`
		BucketURLFormat      string `json:"bucketURLFormat"`
		CredentialsSecretRef struct {
			Name string `json:"name"`
		} `json:"credentialsSecretRef"`
	} `json:"s3"`
}

func IsControlPlane(o *fn.KubeObject) bool {
	return o.GetAPIVersion() == controlPlaneAPIVersion && o.GetKind() == controlPlaneKind
}

// IsProjected tells a child an earlier run projected from a ControlPlane:
// it carries the ControlPlane's owner marks. A hand-written object is never
// one, whatever its name.
func IsProjected(o *fn.KubeObject) bool {
	return o.GetLabel(labelControlPlaneName) != "" && o.GetAPIVersion() == v1alpha1.APIVersion &&
		(o.GetKind() == v1alpha1.GlanceKind || o.GetKind() == v1alpha1.GlanceBackendKind)
}

// ProjectedFrom is the ControlPlane a projected child came from, by its
// owner marks: for a finding about the child, the object a user wrote.
func ProjectedFrom(child, cp *fn.KubeObject) bool {
	return IsProjected(child) && IsControlPlane(cp) &&
		cp.GetName() == child.GetLabel(labelControlPlaneName) && cp.GetNamespace() == child.GetLabel(labelControlPlaneNS)
}

func Project(o *fn.KubeObject) ([]*fn.KubeObject, field.ErrorList) {
	var cp controlPlane
	if err := yaml.Unmarshal([]byte(o.String()), &cp); err != nil {
		return nil, field.ErrorList{fieldError("spec", "the ControlPlane could not be read: "+err.Error())}
	}
	gl := cp.Spec.Services.Glance
	if gl == nil {
		return nil, nil
	}
	if errs := validateControlPlaneGlance(&cp); len(errs) > 0 {
		return nil, errs
	}
	glanceName := cp.Metadata.Name + "-glance"
	ns := cp.Metadata.Namespace
	if gl.Namespace != nil && gl.Namespace.Name != "" {
		ns = gl.Namespace.Name
	}
	g := &v1alpha1.Glance{}
	g.APIVersion, g.Kind = v1alpha1.APIVersion, v1alpha1.GlanceKind
	g.Name, g.Namespace = glanceName, ns
	s := &g.Spec
	s.OpenStackRelease = cp.Spec.OpenStackRelease
	s.Image = v1alpha1.ImageSpec{Repository: defaultGlanceRepository, Tag: cp.Spec.OpenStackRelease}
	if gl.Image != nil {
		s.Image = *gl.Image
	}
	s.TargetClusterRef = gl.TargetClusterRef
	s.ExtraConfig = mergedExtraConfig(cp.Spec.GlobalExtraConfig, gl.ExtraConfig)
	db, cache := effectiveBacking(&cp)
	s.Database = db
	s.Database.Database = "glance"
	if db.ClusterRef != nil {
		s.Database.SecretRef = v1alpha1.SecretRefSpec{Name: glanceName + "-db-credentials", Key: "password"}
		s.Database.CredentialsMode = "Static"
		if cmp.Or(gl.DatabaseCredentialsMode, db.CredentialsMode) == "Dynamic" {
			s.Database.CredentialsMode = "Dynamic"
		}
	}
	s.Cache = cache
	s.KeystoneEndpoint, s.KeystonePublicEndpoint = keystoneEndpoints(&cp)
	s.Region = cmp.Or(cp.Spec.Region, defaultRegion)
	domain := cmp.Or(cp.Spec.KORC.AdminCredential.DomainName, defaultAdminDomain)
	s.ServiceUser = v1alpha1.ServiceUserSpec{Username: "glance", ProjectName: "service-glance", UserDomainName: domain,
		ProjectDomainName: domain, SecretRef: v1alpha1.PasswordSecretRefSpec{Name: glanceName + "-credentials", Key: "password"}}
	s.SecretStoreRef = cp.Spec.SecretStoreRef
	if s.SecretStoreRef == nil {
		s.SecretStoreRef = &v1alpha1.SecretStoreRefSpec{Kind: "SecretStore", Name: "openbao-tenant-store"}
	}
	s.Gateway, s.ImportFiltering, s.Staging, s.ImageCache, s.ImportPlugins = gl.Gateway, gl.ImportFiltering, gl.Staging, gl.ImageCache, gl.ImportPlugins
	s.Deployment.Replicas = 3
	if gl.Replicas != nil {
		s.Deployment.Replicas = *gl.Replicas
	}
	marks := map[string]string{labelControlPlaneName: cp.Metadata.Name, labelControlPlaneNS: cp.Metadata.Namespace}
	g.Labels = marks
	out := []*fn.KubeObject{}
	child, err := ynode.Object(g)
	if err != nil {
		return nil, field.ErrorList{fieldError("spec.services.glance", err.Error())}
	}
	out = append(out, child)
	for _, e := range gl.Backends {
		b := &v1alpha1.GlanceBackend{}
		b.APIVersion, b.Kind = v1alpha1.APIVersion, v1alpha1.GlanceBackendKind
		b.Name, b.Namespace, b.Labels = glanceName+"-"+e.Name, ns, maps.Clone(marks)
		b.Spec = v1alpha1.GlanceBackendSpec{GlanceRef: v1alpha1.GlanceRefSpec{Name: glanceName}, Type: v1alpha1.GlanceBackendTypeS3, IsDefault: e.IsDefault,
			S3: &v1alpha1.S3BackendSpec{Host: e.S3.Endpoint, Bucket: e.S3.Bucket, Region: e.S3.Region, BucketURLFormat: e.S3.BucketURLFormat,
				CredentialsSecretRef: v1alpha1.SecretNameRefSpec{Name: e.S3.CredentialsSecretRef.Name}}}
		child, err := ynode.Object(b)
		if err != nil {
			return nil, field.ErrorList{fieldError("spec.services.glance.backends", err.Error())}
		}
		out = append(out, child)
	}
	return out, nil
}

// effectiveBacking is the Glance's database and cache: its dedicated ones,
// else the ControlPlane-wide ones, with the c5c3 webhook's defaults.
func effectiveBacking(cp *controlPlane) (v1alpha1.DatabaseSpec, v1alpha1.CacheSpec) {
	var db v1alpha1.DatabaseSpec
	var cache v1alpha1.CacheSpec
	dbName, cacheName := "openstack-db", "openstack-memcached"
	if inf := cp.Spec.Infrastructure; inf != nil {
		db, cache = inf.Database, inf.Cache
	}
	if d := cp.Spec.Services.Glance.DedicatedBackingServices; d != nil {
		if d.Database != nil {
			db, dbName = *d.Database, cp.Metadata.Name+"-glance-db"
		}
		if d.Cache != nil {
			cache, cacheName = *d.Cache, cp.Metadata.Name+"-glance-cache"
		}
	}
	if db.Host == "" && (db.ClusterRef == nil || db.ClusterRef.Name == "") {
		db.ClusterRef = &corev1.LocalObjectReference{Name: dbName}
	}
	cache.Backend = cmp.Or(cache.Backend, v1alpha1.DefaultCacheBackend)
	if len(cache.Servers) == 0 && (cache.ClusterRef == nil || cache.ClusterRef.Name == "") {
		cache.ClusterRef = &corev1.LocalObjectReference{Name: cacheName}
	}
	return db, cache
}

// keystoneEndpoints: the projected Keystone's in-cluster Service when the
// Glance runs on Keystone's cluster, its public URL otherwise; the public
// URL is the explicit one or https://<gateway host>/v3.
func keystoneEndpoints(cp *controlPlane) (internal, public string) {
	ks := cp.Spec.Services.Keystone
	ksNS := cp.Metadata.Namespace
	var ksCluster *v1alpha1.ClusterRefSpec
	if ks != nil {
		public = ks.PublicEndpoint
		if public == "" && ks.Gateway != nil {
			public = fmt.Sprintf("https://%s/v3", ks.Gateway.Hostname)
		}
		if ks.Namespace != nil && ks.Namespace.Name != "" {
			ksNS = ks.Namespace.Name
		}
		ksCluster = ks.TargetClusterRef
	}
	glCluster := cp.Spec.Services.Glance.TargetClusterRef
	if (glCluster == nil) == (ksCluster == nil) && (glCluster == nil || glCluster.Name == ksCluster.Name) {
		return fmt.Sprintf("http://%s-keystone.%s.svc:5000/v3", cp.Metadata.Name, ksNS), public
	}
	return public, public
}

// mergedExtraConfig is the global block with the service's over it, key by
// key.
func mergedExtraConfig(global, service map[string]map[string]string) map[string]v1alpha1.ConfigSection {
	out := map[string]v1alpha1.ConfigSection{}
	for _, src := range []map[string]map[string]string{global, service} {
		for section, kv := range src {
			if out[section] == nil {
				out[section] = v1alpha1.ConfigSection{}
			}
			for k, v := range kv {
				out[section][k] = v1alpha1.OptionValue(v)
			}
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// validateControlPlaneGlance is the c5c3 webhook's rules on
// spec.services.glance (controlplane_webhook.go: validateGlance, its
// publicEndpoint and backends rules, the External-mode and placement
// cross-field rules that name Glance), in its words.
func validateControlPlaneGlance(cp *controlPlane) field.ErrorList {
	var errs field.ErrorList
	gl := cp.Spec.Services.Glance
	if ks := cp.Spec.Services.Keystone; ks != nil && ks.Mode == "External" {
		errs = append(errs, &field.Error{Type: field.ErrorTypeForbidden, Field: "spec.services.glance", BadValue: omit,
			Detail: "forbidden when services.keystone.mode is External (Glance needs its own External-mode design)"})
	}
	if gl.DatabaseCredentialsMode == "Dynamic" {
		p := "spec.services.glance.databaseCredentialsMode"
		switch {
		case gl.DedicatedBackingServices != nil && gl.DedicatedBackingServices.Database != nil:
			errs = append(errs, fieldError(p, "credentialsMode Dynamic is not supported as an override on a service with a dedicated database: "+
				"the override retargets the shared database this service does not use, and a dedicated database is "+
				"Static-only (set dedicatedBackingServices.database.credentialsMode instead)"))
		case cp.Spec.Infrastructure == nil || cp.Spec.Infrastructure.Database.ClusterRef == nil && cp.Spec.Infrastructure.Database.Host != "":
			errs = append(errs, fieldError(p, "credentialsMode Dynamic requires the shared database to be managed (clusterRef): the dynamic engine "+
				"issues per-tenant DB users only against a cluster the operator provisions, so it cannot run against "+
				"a brownfield database"))
		}
	}
	if gl.TargetClusterRef != nil {
		if gl.Namespace == nil {
			errs = append(errs, fieldError("spec.services.glance.namespace", "is required when targetClusterRef is set: every namespace maps to exactly one cluster, and the "+
				"ControlPlane's own namespace stays on the local one, so a placed service needs a namespace of its own"))
		}
		if gl.PublicEndpoint == "" && gl.Gateway == nil {
			errs = append(errs, fieldError("spec.services.glance.publicEndpoint", "one of publicEndpoint or gateway is required when targetClusterRef is set: the service's "+
				"in-cluster Service DNS name resolves nowhere from another cluster, so the catalog entry must advertise an externally routable address"))
		}
	}
	errs = append(errs, validatePublicEndpoint(gl)...)
	backends := cp.Spec.Services.Glance.Backends
	path := "spec.services.glance.backends"
	if len(backends) == 0 {
		errs = append(errs, fieldError(path, "at least one backend must be declared"))
	}
	defaults := 0
	seen := map[string]bool{}
	for i, e := range backends {
		p := fmt.Sprintf("%s[%d]", path, i)
		if e.IsDefault {
			defaults++
		}
		if seen[e.Name] {
			errs = append(errs, fieldError(p+".name", fmt.Sprintf("duplicate backends entry %q: the list is keyed by name", e.Name)))
		}
		seen[e.Name] = true
		if (e.Type == "S3") != (e.S3 != nil) {
			errs = append(errs, fieldError(p, "the s3 block must be set exactly when type is S3"))
			continue
		}
		if e.S3 != nil && e.S3.CredentialsSecretRef.Name == "" {
			errs = append(errs, fieldError(p+".s3.credentialsSecretRef.name", "must be set"))
		}
		if n := len(cp.Metadata.Name) + len("-glance-") + len(e.Name); n > maxObjectName {
			errs = append(errs, fieldError(p+".name", fmt.Sprintf(
				"the child GlanceBackend CR name would be %d bytes; shorten the ControlPlane name or the backend name so the total stays within the %d-byte Kubernetes object-name limit",
				n, maxObjectName)))
		}
	}
	if len(backends) > 0 && defaults != 1 {
		errs = append(errs, fieldError(path, MsgControlPlaneDefaults))
	}
	return errs
}

// fieldError is an error at a path written out, as the c5c3 webhook
// reports them.
var omit = field.OmitValueType{}

func fieldError(path, msg string) *field.Error {
	return &field.Error{Type: field.ErrorTypeInvalid, Field: path, BadValue: omit, Detail: msg}
}

// HandWrittenDefault is the rule for a GlanceBackend written by hand and
// attached to a projected Glance: it is kept, but the ControlPlane's
// backends list owns the default store.
func HandWrittenDefault(g *v1alpha1.Glance, backends []*v1alpha1.GlanceBackend, labels func(string) map[string]string) string {
	cp := g.Labels[labelControlPlaneName]
	if cp == "" {
		return ""
	}
	var projected string
	var hand []string
	for _, b := range backends {
		if !b.Spec.IsDefault {
			continue
		}
		if labels(b.Name)[labelControlPlaneName] == cp {
			projected = b.Name
		} else {
			hand = append(hand, b.Name)
		}
	}
	if len(hand) == 0 {
		return ""
	}
	return fmt.Sprintf("GlanceBackend %s is written by hand and attached to Glance %s, which ControlPlane %s projects: "+
		"it is kept, but it cannot be the default store (the ControlPlane's default is %s); set isDefault on a "+
		"spec.services.glance.backends entry of the ControlPlane instead",
		strings.Join(hand, ", "), g.Name, cp, cmp.Or(projected, "none"))
}

// validatePublicEndpoint: the catalog URL of the Glance API, a bare
// https origin on the gateway's host when a gateway routes it.
func validatePublicEndpoint(gl *controlPlaneGlance) field.ErrorList {
	if gl.PublicEndpoint == "" {
		return nil
	}
	p := "spec.services.glance.publicEndpoint"
	u, err := url.Parse(gl.PublicEndpoint)
	switch {
	case err != nil:
		return field.ErrorList{fieldError(p, "must be a valid http(s) URL")}
	case u.Scheme != "http" && u.Scheme != "https":
		return field.ErrorList{fieldError(p, "must be an http(s) URL (scheme http or https)")}
	case u.Host == "":
		return field.ErrorList{fieldError(p, "must include a host")}
	}
	var errs field.ErrorList
	if (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		errs = append(errs, fieldError(p, "must be a bare origin (scheme://host[:port]) with no path, query, or fragment: the Glance API is served "+
			"at the root and clients append the API path to the catalog endpoint"))
	}
	if gl.Gateway == nil || gl.Gateway.Hostname == "" {
		return errs
	}
	if u.Scheme != "https" {
		errs = append(errs, fieldError(p, "scheme must be https when services.glance.gateway is configured (the Gateway listener terminates TLS): "+
			"every image call sends the caller's scoped Keystone token, and the image payload, to this endpoint"))
	}
	if u.Hostname() != gl.Gateway.Hostname {
		errs = append(errs, fieldError(p, fmt.Sprintf("host %q must equal services.glance.gateway.hostname %q: the Gateway listener routes that "+
			"hostname to the Glance API, so the catalog would direct image clients to a host that never reaches it", u.Hostname(), gl.Gateway.Hostname)))
	}
	return errs
}
