package v1alpha1

import (
	"fmt"
	"net/url"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The known S3 bugs of Glance's releases: what the option catalogs cannot
// say, each dodged or reported at build time and named by its upstream
// bug. The release ranges were measured on each release's glance in the
// chroot matrix (tests/e2e/glance); docs/contract.md lists the rules.

// Bug #2121144 (glance_store): boto3 1.36 and later compute and send
// checksum headers by default ("flexible checksums"), which RGW, MinIO and
// Garage refuse. glance_store 5.4 (2026.1) reads two options that turn
// them off; before it, botocore's own environment variables do.
const (
	BugChecksumHeaders        = "LP #2121144"
	EnvRequestChecksum        = "AWS_REQUEST_CHECKSUM_CALCULATION"
	EnvResponseChecksum       = "AWS_RESPONSE_CHECKSUM_VALIDATION"
	ChecksumWhenRequired      = "when_required"
	OptionRequestChecksum     = "s3_store_request_checksum_calculation"
	OptionResponseChecksum    = "s3_store_response_checksum_validation"
	OptionIntegrityProtection = "s3_store_enable_data_integrity_protection"
)

// IsAWSHost tells an S3 endpoint of Amazon's: those accept the checksum
// headers, every other S3 server is assumed not to.
func IsAWSHost(host string) bool {
	u, err := url.Parse(host)
	if err != nil || u.Hostname() == "" {
		return false
	}
	h := strings.ToLower(u.Hostname())
	return h == "amazonaws.com" || strings.HasSuffix(h, ".amazonaws.com") || strings.HasSuffix(h, ".amazonaws.com.cn")
}

// ChecksumEnv is the environment glance-api needs for LP #2121144: on a
// release between 2025.1 and 2026.1 (which has no option for it) with a
// store on a non-AWS S3 server, botocore's variables set to
// when_required. They are botocore's, read by no oslo code, so they carry
// their value literally. Nil when nothing is needed.
func ChecksumEnv(release string, backends []*GlanceBackend) [][2]string {
	// 2025.1 is the first release whose boto3 (trixie's 1.37) sends them.
	if !ReleaseAtLeast(release, 2025, 1) || ReleaseAtLeast(release, 2026, 1) {
		return nil
	}
	for _, b := range backends {
		if b.Spec.S3 != nil && !IsAWSHost(b.Spec.S3.Host) {
			return [][2]string{{EnvRequestChecksum, ChecksumWhenRequired}, {EnvResponseChecksum, ChecksumWhenRequired}}
		}
	}
	return nil
}

// ChecksumOptions are the store options LP #2121144 needs from 2026.1 on a
// non-AWS S3 server, unless the backend's extraOptions set any of the
// three checksum options itself (then its choice is the user's).
func ChecksumOptions(release string, b *GlanceBackend) [][2]string {
	if !ReleaseAtLeast(release, 2026, 1) || b.Spec.S3 == nil || IsAWSHost(b.Spec.S3.Host) {
		return nil
	}
	for _, o := range []string{OptionRequestChecksum, OptionResponseChecksum, OptionIntegrityProtection} {
		if _, set := b.Spec.ExtraOptions[o]; set {
			return nil
		}
	}
	return [][2]string{{OptionRequestChecksum, ChecksumWhenRequired}, {OptionResponseChecksum, ChecksumWhenRequired}}
}

// LP #2047688 and LP #2131085: with [DEFAULT] debug on, glance_store logs
// S3 credentials. Measured on every release in the matrix (an upload, a
// download and a delete with debug on, the log searched for both keys):
// each logs the store's access key at DEBUG on each of them ("Retrieved
// image object from S3 using s3_host=..., access_key=..."), none the
// secret key.
const BugDebugLogsKeys = "LP #2047688, LP #2131085"

// DebugLogsStoreKeys tells a release whose debug log shows the S3 stores'
// access keys.
func DebugLogsStoreKeys(release string) bool {
	return ReleaseAtLeast(release, 2022, 2)
}

// RemovedStoreLogsKeys tells a release that, once a store leaves its
// configuration, logs the full location URL of an image in it at WARNING
// on every read of that image ("Invalid location uri ..."): keys included
// wherever the location holds them (measured: 2022.2 to 2026.1 log them,
// 2026.2 does not).
func RemovedStoreLogsKeys(release string) bool {
	return LocationsCarryKeys(release)
}

// LP #2134325: on 2024.2 to 2025.2, a GET of an image by a caller who may
// modify it rewrites its location URL with the store's keys (LP #2127798's
// fix), and a secret key holding '/' breaks that URL: glance builds it with
// urlparse, which takes the '/' for the start of the path. Measured (an
// image uploaded with such a key, then read by its owner): 2025.2's
// location gains two more '@' and its data answers 500 from then on;
// 2026.1 finds the credentials by the last '@' and serves it; Debian
// trixie's 2025.1 (30.0.0) predates the rewrite, 2022.2 has none and 2026.2
// writes no keys, and serve it too. The warning keeps the bug report's
// range for 2024.2 and 2025.1 builds that carry the rewrite.
const BugSlashInSecretKey = "LP #2134325"

// S3KeyShapeWarning is what the shape of one key of a store's credentials
// Secret breaks on release, naming the key and never its value; "" when
// nothing. (What breaks every release before glance_store 5.7 is a
// refusal: S3CredentialProblem.)
func S3KeyShapeWarning(release, key string, v []byte) string {
	if key == CredentialsSecretAccessKey && strings.Contains(string(v), "/") &&
		ReleaseAtLeast(release, 2024, 2) && !ReleaseAtLeast(release, 2026, 1) {
		return fmt.Sprintf("key %q contains '/', which breaks the image location Glance %s rewrites when a caller who may modify an image reads it (%s): rotate to a secret key without '/' (docs/day2.md)", key, release, BugSlashInSecretKey)
	}
	return ""
}

// LocationsCarryKeys tells a release whose glance_store (before 5.7,
// 2026.2) writes the store's access and secret key into every image's
// location URL in Glance's database.
func LocationsCarryKeys(release string) bool {
	return !ReleaseAtLeast(release, 2026, 2)
}

// ReadsWithLocationKeys tells a release that reads an image with the key
// pair in its location URL, not the configured one: once the pair an
// image was written with is revoked on the S3 server, that image no
// longer downloads. Measured per release (an image written with one
// pair, the Secret changed to a new pair while the old one stays valid:
// every release serves it; then the old pair revoked): 2022.2 and 2025.1
// no longer serve it; 2025.2, 2026.1 and 2026.2 serve it with the new
// pair, and 2025.2 and 2026.1 rewrite its location with the new pair on
// that read.
func ReadsWithLocationKeys(release string) bool {
	return !ReleaseAtLeast(release, 2025, 2)
}

// RotationAdvice is the safe way to rotate a store's S3 key pair on
// release, in one sentence: what explain prints when a store's
// credentialsSecretRef changes (docs/day2.md has the steps).
func RotationAdvice(release string) string {
	switch {
	case ReadsWithLocationKeys(release):
		return fmt.Sprintf("Glance %s reads every image with the key pair written into its location at upload, not the configured one: keep the old pair valid on the S3 server for as long as an image written with it exists (revoked, those images no longer download)", release)
	case LocationsCarryKeys(release):
		return fmt.Sprintf("Glance %s reads images with the configured pair, so the old pair may be revoked once every pod runs with the new Secret; an image's location keeps the old pair until a caller who may modify the image reads it (Glance then rewrites it with the new pair), and once its store is removed Glance logs that location at WARNING on every read", release)
	}
	return fmt.Sprintf("Glance %s writes locations without keys and reads with the configured pair: revoke the old pair once every pod runs with the new Secret", release)
}

// LocationOptions are the [DEFAULT] options that show API users an
// image's location URLs: show_image_direct_url (the image's direct_url)
// and show_multiple_locations (its locations). On a release whose
// locations carry the store's keys, either shows every user who may read
// an image both S3 keys of its store.
var LocationOptions = []string{"show_image_direct_url", "show_multiple_locations"}

// LocationsLeakKeys refuses, on such a release, an extraConfig that
// turns one of LocationOptions on (oslo.config's true spellings) while S3
// stores are attached; nil on 2026.2 and later, whose locations carry no
// keys.
func LocationsLeakKeys(release string, extraConfig map[string]ConfigSection, stores int) field.ErrorList {
	if stores == 0 || !LocationsCarryKeys(release) {
		return nil
	}
	var errs field.ErrorList
	for section, opts := range extraConfig {
		if section != "DEFAULT" {
			continue
		}
		for _, opt := range LocationOptions {
			v, set := opts[opt]
			if !set || !slices.Contains([]string{"true", "1", "yes", "on"}, strings.ToLower(strings.TrimSpace(string(v)))) {
				continue
			}
			errs = append(errs, field.Invalid(field.NewPath("spec", "extraConfig").Key(section).Key(opt), string(v), fmt.Sprintf(
				"option [DEFAULT] %s shows every user who may read an image its location URL, and Glance %s (glance_store before 5.7) writes the store's S3 access and secret key into every S3 location: it would leak the keys of every store; leave it off on this release (2026.2 writes locations without keys)",
				opt, release)))
		}
	}
	return errs
}
