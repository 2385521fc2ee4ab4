package v1alpha1

import (
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

var bucketURLFormats = []string{"path", "virtual"}

// ValidateGlanceBackend runs every per-object admission rule of the
// contract on a defaulted GlanceBackend and returns all violations. The
// UPDATE-only transition rules (glanceRef and type immutable) need the old
// object; see ValidateGlanceBackendUpdate.
func ValidateGlanceBackend(b *GlanceBackend) field.ErrorList {
	errs := ValidateStoreName(b.Name, field.NewPath("metadata", "name"))
	spec := field.NewPath("spec")
	errs = append(errs, minLength1(spec.Child("glanceRef", "name"), b.Spec.GlanceRef.Name)...)
	errs = append(errs, validateBackendType(b.Spec.Type, spec.Child("type"))...)
	if (b.Spec.Type == GlanceBackendTypeS3) != (b.Spec.S3 != nil) {
		errs = append(errs, field.Invalid(spec, omit, MsgS3Union))
	}
	if b.Spec.S3 != nil {
		errs = append(errs, validateS3(b.Spec.S3, spec.Child("s3"))...)
	}
	errs = append(errs, ValidateExtraOptions(b.Spec.ExtraOptions, spec.Child("extraOptions"))...)
	if _, both := b.Spec.ExtraOptions["s3_store_cacert"]; both && b.Spec.S3 != nil && b.Spec.S3.CABundleRef != nil {
		errs = append(errs, field.Invalid(spec.Child("extraOptions").Key("s3_store_cacert"), omit, MsgCACertTwice))
	}
	return errs
}

// ValidateGlanceBackendUpdate is the pair of CEL transition rules: a
// backend's glanceRef and type never change.
func ValidateGlanceBackendUpdate(old, b *GlanceBackend) field.ErrorList {
	var errs field.ErrorList
	spec := field.NewPath("spec")
	if old.Spec.GlanceRef != b.Spec.GlanceRef {
		errs = append(errs, field.Invalid(spec.Child("glanceRef"), omit, MsgGlanceRefImmutable))
	}
	if old.Spec.Type != b.Spec.Type {
		errs = append(errs, field.Invalid(spec.Child("type"), b.Spec.Type, MsgTypeImmutable))
	}
	return errs
}

func validateBackendType(t GlanceBackendType, path *field.Path) field.ErrorList {
	switch t {
	case GlanceBackendTypeS3:
		return nil
	case "":
		return field.ErrorList{field.Required(path, "")}
	default:
		return field.ErrorList{field.NotSupported(path, t, []GlanceBackendType{GlanceBackendTypeS3})}
	}
}

// userinfo is a user[:password]@ in a URL's authority.
var userinfo = regexp.MustCompile(`^https?://[^/?#]*@`)

// hostShape: s3_store_host is the base of every image's location URL,
// which glance_store builds by string and parses back: userinfo there
// would be a credential in the database (and in every location), and a
// '?' or '#' ends the URL's path early.
func hostShape(path *field.Path, host string) field.ErrorList {
	var errs field.ErrorList
	if userinfo.MatchString(host) {
		errs = append(errs, field.Invalid(path, omit, MsgHostUserinfo))
	}
	if strings.ContainsAny(host, "?#") {
		errs = append(errs, field.Invalid(path, omit, MsgHostQueryOrFragment))
	}
	if strings.ContainsAny(host, " \t") {
		errs = append(errs, field.Invalid(path, omit, MsgHostWhitespace))
	}
	return errs
}

// dnsLabel is an RFC 1123 label, as a virtual-hosted bucket must be.
var dnsLabel = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)

func validateS3(s *S3BackendSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, minLength1(path.Child("host"), s.Host)...)
	if s.Host != "" {
		errs = append(errs, matches(path.Child("host"), s.Host, httpURL)...)
	}
	errs = append(errs, noCRLF(path.Child("host"), s.Host, 2048)...)
	errs = append(errs, hostShape(path.Child("host"), s.Host)...)
	errs = append(errs, minLength1(path.Child("bucket"), s.Bucket)...)
	errs = append(errs, noCRLF(path.Child("bucket"), s.Bucket, 255)...)
	errs = append(errs, noCRLF(path.Child("region"), s.Region, 128)...)
	errs = append(errs, minLength1(path.Child("credentialsSecretRef", "name"), s.CredentialsSecretRef.Name)...)
	if f := s.BucketURLFormat; f != "" && f != "path" && f != "virtual" {
		errs = append(errs, field.NotSupported(path.Child("bucketURLFormat"), f, bucketURLFormats))
	}
	if s.BucketURLFormat == "virtual" && !dnsLabel.MatchString(s.Bucket) {
		errs = append(errs, field.Invalid(path, omit, MsgVirtualBucketLabel))
	}
	errs = append(errs, minimum1(path.Child("largeObjectSize"), s.LargeObjectSize)...)
	errs = append(errs, minimum1(path.Child("largeObjectChunkSize"), s.LargeObjectChunkSize)...)
	if v := s.LargeObjectChunkSize; v != nil && *v >= 1 && *v < 5 {
		errs = append(errs, field.Invalid(path.Child("largeObjectChunkSize"), *v, MsgChunkBelowS3Minimum))
	}
	return errs
}
