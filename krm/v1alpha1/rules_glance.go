package v1alpha1

import (
	"regexp"

	"k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

var (
	openStackRelease = regexp.MustCompile(`^\d{4}\.[12]$`)
	imageDigest      = regexp.MustCompile(`^sha256:[a-f0-9]{64}$`)
	memcachedServer  = regexp.MustCompile(`^(inet6:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?):[0-9]{1,5}$`)
)

const (
	MaxGlanceNameLength = 43
	MaxCacheServers     = 32
)

// ValidateGlance runs every per-object rule on a defaulted Glance and
// returns all violations.
func ValidateGlance(g *Glance) field.ErrorList {
	var errs field.ErrorList
	name := field.NewPath("metadata", "name")
	for _, msg := range validation.NameIsDNSSubdomain(g.Name, false) {
		errs = append(errs, field.Invalid(name, g.Name, msg))
	}
	if len(g.Name) > MaxGlanceNameLength {
		errs = append(errs, field.Invalid(name, g.Name, MsgGlanceNameTooLong))
	}

	spec := field.NewPath("spec")
	s := &g.Spec
	errs = append(errs, matches(spec.Child("openStackRelease"), s.OpenStackRelease, openStackRelease)...)
	errs = append(errs, validateImage(&s.Image, spec.Child("image"))...)
	errs = append(errs, matches(spec.Child("keystoneEndpoint"), s.KeystoneEndpoint, httpURL)...)
	if s.KeystonePublicEndpoint != "" {
		errs = append(errs, matches(spec.Child("keystonePublicEndpoint"), s.KeystonePublicEndpoint, httpURL)...)
	}
	for _, f := range []struct {
		path  *field.Path
		v     string
		limit int
	}{
		{spec.Child("keystoneEndpoint"), s.KeystoneEndpoint, 2048},
		{spec.Child("keystonePublicEndpoint"), s.KeystonePublicEndpoint, 2048},
		{spec.Child("region"), s.Region, 128},
		{spec.Child("serviceUser", "username"), s.ServiceUser.Username, 255},
		{spec.Child("serviceUser", "projectName"), s.ServiceUser.ProjectName, 255},
		{spec.Child("serviceUser", "userDomainName"), s.ServiceUser.UserDomainName, 255},
		{spec.Child("serviceUser", "projectDomainName"), s.ServiceUser.ProjectDomainName, 255},
	} {
		errs = append(errs, noCRLF(f.path, f.v, f.limit)...)
	}
	errs = append(errs, minLength1(spec.Child("serviceUser", "secretRef", "name"), s.ServiceUser.SecretRef.Name)...)
	errs = append(errs, minLength1(spec.Child("database", "secretRef", "name"), s.Database.SecretRef.Name)...)
	errs = append(errs, validateCacheServers(s.Cache.Servers, spec.Child("cache", "servers"))...)
	if s.TargetClusterRef != nil {
		errs = append(errs, minLength1(spec.Child("targetClusterRef", "name"), s.TargetClusterRef.Name)...)
	}
	errs = append(errs, ValidateExtraConfig(s.ExtraConfig, spec.Child("extraConfig"))...)
	errs = append(errs, ValidateSeedRules(g)...)
	return errs
}

func validateImage(img *ImageSpec, path *field.Path) field.ErrorList {
	errs := minLength1(path.Child("repository"), img.Repository)
	if (img.Tag != "") == (img.Digest != "") {
		errs = append(errs, field.Invalid(path, omit, MsgImageTagXorDigest))
	}
	if img.Digest != "" {
		errs = append(errs, matches(path.Child("digest"), img.Digest, imageDigest)...)
	}
	return errs
}

func validateCacheServers(servers []string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(servers) > MaxCacheServers {
		errs = append(errs, field.TooMany(path, len(servers), MaxCacheServers))
	}
	for i, srv := range servers {
		errs = append(errs, matches(path.Index(i), srv, memcachedServer)...)
	}
	return errs
}

// ValidateGlanceUpdate is the seed's transition rule: targetClusterRef is
// set at creation or never, and never renamed (moving a service between
// clusters is not a supported edit).
func ValidateGlanceUpdate(old, g *Glance) field.ErrorList {
	o, n := old.Spec.TargetClusterRef, g.Spec.TargetClusterRef
	if (o == nil) != (n == nil) || (o != nil && o.Name != n.Name) {
		return field.ErrorList{field.Invalid(field.NewPath("spec"), omit, MsgTargetClusterRefImmutable)}
	}
	return nil
}
