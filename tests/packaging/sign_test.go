//go:build e2e

package packaging_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// TestSignedAndAttested publishes the images with the release's own
// script (hack/release.sh) to the loopback registry, signing with a key
// made here and no transparency log (nothing here reaches the internet:
// a proxy that refuses is set, so an attempt fails at once), then checks
// with the real cosign what a user checks before use: the index's
// signature, its SLSA provenance and each platform image's SPDX SBOM
// verify with the public key; another key, or an index the key never
// signed pushed in the signed one's place, fail.
func TestSignedAndAttested(t *testing.T) {
	cosign := mustEnv(t, "COSIGN_BIN")
	host := registryHost(t)
	dir := t.TempDir()
	env := append(os.Environ(), "COSIGN_BIN="+cosign, "COSIGN_PASSWORD=glance-krm-test", "COSIGN_YES=true",
		"HTTPS_PROXY=http://127.0.0.1:9", "HTTP_PROXY=http://127.0.0.1:9", "NO_PROXY=127.0.0.1,localhost",
		"TUF_ROOT="+filepath.Join(dir, "tuf"))
	for _, k := range []string{"release", "other"} {
		if _, stderr, err := run(t, env, dir, cosign, "generate-key-pair", "--output-key-prefix", k); err != nil {
			t.Fatalf("cosign generate-key-pair: %v\n%s", err, stderr)
		}
	}
	out, stderr, err := run(t, env, root, "bash", "hack/release.sh", host+"/c5c3", "v0.0.0-test",
		"--key", filepath.Join(dir, "release.key"), "--allow-http-registry")
	if err != nil {
		t.Fatalf("hack/release.sh: %v\n%s", err, stderr)
	}
	refs := strings.Fields(out)
	if len(refs) != len(shipped) {
		t.Fatalf("hack/release.sh printed %q, want one reference per image", out)
	}
	cosignVerify := func(args ...string) (string, error) {
		o, e, err := run(t, env, "", cosign, append(args, "--insecure-ignore-tlog", "--allow-http-registry")...)
		return o + e, err
	}
	for i, s := range shipped {
		ref := refs[i]
		_, digest := index(t, s.target)
		if want := host + "/c5c3/glance-krm-" + s.target + "@" + digest.String(); ref != want {
			t.Errorf("hack/release.sh published %s, want %s", ref, want)
		}
		pub, other := "--key="+filepath.Join(dir, "release.pub"), "--key="+filepath.Join(dir, "other.pub")
		if o, err := cosignVerify("verify", pub, ref); err != nil || !strings.Contains(o, digest.String()) {
			t.Errorf("cosign verify %s: %v\n%s", ref, err, o)
		}
		if o, err := cosignVerify("verify-attestation", pub, "--type=slsaprovenance1", ref); err != nil {
			t.Errorf("cosign verify-attestation slsaprovenance1 %s: %v\n%s", ref, err, o)
		}
		idx, _ := index(t, s.target)
		m, err := idx.IndexManifest()
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range m.Manifests {
			platform := strings.SplitN(ref, "@", 2)[0] + "@" + d.Digest.String()
			if o, err := cosignVerify("verify", pub, platform); err != nil {
				t.Errorf("cosign verify %s (%s): %v\n%s", platform, d.Platform.Architecture, err, o)
			}
			if o, err := cosignVerify("verify-attestation", pub, "--type=spdxjson", platform); err != nil {
				t.Errorf("cosign verify-attestation spdxjson %s (%s): %v\n%s", platform, d.Platform.Architecture, err, o)
			}
		}
		if o, err := cosignVerify("verify", other, ref); err == nil {
			t.Errorf("cosign verify %s with another key passed:\n%s", ref, o)
		}
		if o, err := cosignVerify("verify-attestation", other, "--type=slsaprovenance1", ref); err == nil {
			t.Errorf("cosign verify-attestation %s with another key passed:\n%s", ref, o)
		}
	}

	// The install manifests pin the controller as it was published.
	dist := t.TempDir()
	if _, stderr, err := run(t, env, root, "bash", "hack/release-manifests.sh", refs[1], dist); err != nil {
		t.Fatalf("hack/release-manifests.sh: %v\n%s", err, stderr)
	}
	manifests, err := os.ReadFile(filepath.Join(dist, "glance-krm-controller.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(manifests), "image: "+refs[1]+"\n") {
		t.Errorf("glance-krm-controller.yaml does not run %s:\n%s", refs[1], manifests)
	}
	crds, err := os.ReadFile(filepath.Join(dist, "glance-krm-crds.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{"kind: Glance\n", "kind: GlanceBackend\n"} {
		if !strings.Contains(string(crds), kind) {
			t.Errorf("glance-krm-crds.yaml has no %s", strings.TrimSpace(kind))
		}
	}

	// Tampered: another index (the controller's) pushed under the
	// function's name and tag; its digest is not the one signed.
	tampered, err := name.NewTag(host+"/c5c3/glance-krm-fn:v0.0.0-test", name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	ctrl, ctrlDigest := index(t, "controller")
	if err := remote.WriteIndex(tampered, ctrl); err != nil {
		t.Fatal(err)
	}
	if o, err := cosignVerify("verify", "--key="+filepath.Join(dir, "release.pub"), tampered.String()); err == nil {
		t.Errorf("cosign verify of the tampered tag (now %s) passed:\n%s", ctrlDigest, o)
	}
	if o, err := cosignVerify("verify", "--key="+filepath.Join(dir, "release.pub"), host+"/c5c3/glance-krm-fn@"+ctrlDigest.String()); err == nil {
		t.Errorf("cosign verify of an unsigned digest passed:\n%s", o)
	}
}
