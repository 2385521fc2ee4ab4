//go:build e2e

package packaging_test

import (
	"bytes"
	"crypto/sha256"
	"debug/buildinfo"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
	spdxjson "github.com/spdx/tools-golang/json"
	"github.com/spdx/tools-golang/spdxlib"
)

// TestImagesReproducible builds every index again into another folder:
// the same commit and binaries give the same index digests, SBOMs and
// provenance, byte for byte.
func TestImagesReproducible(t *testing.T) {
	out := t.TempDir()
	cmd := exec.Command("bash", "hack/image.sh", "repro")
	cmd.Dir, cmd.Env = root, append(os.Environ(), "OUT="+out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("hack/image.sh: %v\n%s", err, b)
	}
	for _, s := range shipped {
		for _, f := range []string{s.target + ".digest", s.target + ".amd64.spdx.json", s.target + ".arm64.spdx.json", s.target + ".provenance.json"} {
			first, err := os.ReadFile(filepath.Join(root, "build", "oci", f))
			if err != nil {
				t.Fatal(err)
			}
			again, err := os.ReadFile(filepath.Join(out, f))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(first, again) {
				t.Errorf("%s differs between two builds of the same binaries", f)
			}
		}
	}
}

// TestSBOMs holds each platform image's SPDX document to the image: it
// validates, describes that image's manifest, names every executable the
// image holds with its sha256, and for a Go executable every module its
// build info names (read here from the image's own file), statically
// linked; the sidecar's busybox by its Debian package.
func TestSBOMs(t *testing.T) {
	for _, s := range shipped {
		idx, _ := index(t, s.target)
		m, err := idx.IndexManifest()
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range m.Manifests {
			arch := d.Platform.Architecture
			t.Run(s.target+"/"+arch, func(t *testing.T) {
				f, err := os.Open(filepath.Join(root, "build", "oci", s.target+"."+arch+".spdx.json"))
				if err != nil {
					t.Fatal(err)
				}
				defer func() { _ = f.Close() }()
				doc, err := spdxjson.Read(f)
				if err != nil {
					t.Fatal(err)
				}
				if err := spdxlib.ValidateDocument(doc); err != nil {
					t.Fatal(err)
				}
				byID := map[string]string{}  // SPDXID → name@version
				purls := map[string]string{} // SPDXID → purl
				sums := map[string]string{}  // SPDXID → sha256
				for _, p := range doc.Packages {
					byID[string(p.PackageSPDXIdentifier)] = p.PackageName + "@" + p.PackageVersion
					for _, r := range p.PackageExternalReferences {
						purls[string(p.PackageSPDXIdentifier)] = r.Locator
					}
					for _, c := range p.PackageChecksums {
						sums[string(p.PackageSPDXIdentifier)] = c.Value
					}
				}
				links := map[string]bool{} // "A REL B" by names
				for _, r := range doc.Relationships {
					links[byID[string(r.RefA.ElementRefID)]+" "+r.Relationship+" "+byID[string(r.RefB.ElementRefID)]] = true
				}
				imageID := "ghcr.io/c5c3/glance-krm-" + s.target + "@" + d.Digest.String()
				if !slices.Contains(mapValues(byID), imageID) {
					t.Errorf("the SBOM does not describe %s", imageID)
				}
				img, err := idx.Image(d.Digest)
				if err != nil {
					t.Fatal(err)
				}
				for path, b := range files(t, img) {
					if !bytes.HasPrefix(b, []byte("\x7fELF")) {
						continue
					}
					exe := ""
					for id, sum := range sums {
						if sum == sha256Hex(b) {
							exe = id
						}
					}
					if exe == "" {
						t.Errorf("%s (sha256 %s) is not in the SBOM", path, sha256Hex(b))
						continue
					}
					if !links[imageID+" CONTAINS "+byID[exe]] {
						t.Errorf("the image does not CONTAIN %s", byID[exe])
					}
					bi, err := buildinfo.Read(bytes.NewReader(b))
					if err != nil {
						if !strings.HasPrefix(purls[exe], "pkg:deb/debian/busybox-static@") || !strings.Contains(purls[exe], "arch="+arch) {
							t.Errorf("%s, no Go program, is %s in the SBOM, want Debian's busybox-static for %s", path, purls[exe], arch)
						}
						continue
					}
					for _, dep := range bi.Deps {
						if dep.Replace != nil {
							dep = dep.Replace
						}
						if !links[byID[exe]+" STATIC_LINK "+dep.Path+"@"+dep.Version] {
							t.Errorf("%s links %s@%s; the SBOM does not say so", path, dep.Path, dep.Version)
						}
					}
					if !links[byID[exe]+" STATIC_LINK stdlib@"+bi.GoVersion] {
						t.Errorf("%s: the SBOM does not name Go %s", path, bi.GoVersion)
					}
					if s.target == "argocd-cmp" && strings.HasSuffix(path, "/kustomize") && bi.Main.Version != "v5.8.2" {
						t.Errorf("the sidecar's kustomize is %s", bi.Main.Version)
					}
				}
			})
		}
	}
}

// TestProvenance holds each index's in-toto statement to the build: SLSA
// v1 provenance about that index's digest, from this commit, for both
// platforms, naming every executable of every platform image by digest.
func TestProvenance(t *testing.T) {
	head, err := exec.Command("git", "-C", root, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range shipped {
		t.Run(s.target, func(t *testing.T) {
			st := readProvenance(t, s.target)
			idx, digest := index(t, s.target)
			if st.Type != "https://in-toto.io/Statement/v1" || st.PredicateType != "https://slsa.dev/provenance/v1" {
				t.Errorf("statement %s with predicate %s", st.Type, st.PredicateType)
			}
			if len(st.Subject) != 1 || st.Subject[0].Name != "ghcr.io/c5c3/glance-krm-"+s.target || st.Subject[0].Digest["sha256"] != digest.Hex {
				t.Errorf("subject %+v, want the index %s", st.Subject, digest)
			}
			bd := st.Predicate.BuildDefinition
			if got := fmt.Sprint(bd.ExternalParameters["platforms"]); got != "[linux/amd64 linux/arm64]" {
				t.Errorf("platforms %s", got)
			}
			var named []string
			commit := ""
			for _, d := range bd.ResolvedDependencies {
				if d.Digest["gitCommit"] != "" {
					commit = d.Digest["gitCommit"]
				}
				named = append(named, d.Digest["sha256"])
			}
			if commit != strings.TrimSpace(string(head)) {
				t.Errorf("the provenance names commit %q, HEAD is %s", commit, head)
			}
			for arch, img := range images(t, idx) {
				for path, b := range files(t, img) {
					if bytes.HasPrefix(b, []byte("\x7fELF")) && !slices.Contains(named, sha256Hex(b)) {
						t.Errorf("%s %s is not among the provenance's resolved dependencies", arch, path)
					}
				}
			}
		})
	}
}

// TestAttachedToTheIndex pushes each index with its SBOMs and provenance
// as OCI referrers, as the release does (cosign attaches them signed):
// the registry's referrers API answers each platform image with its SBOM
// and the index with its provenance, byte for byte what was built.
func TestAttachedToTheIndex(t *testing.T) {
	for _, s := range shipped {
		t.Run(s.target, func(t *testing.T) {
			ref := pushed(t, s.target)
			idx, digest := index(t, s.target)
			m, err := idx.IndexManifest()
			if err != nil {
				t.Fatal(err)
			}
			attach := func(subject v1.Descriptor, mediaType types.MediaType, file string) []byte {
				b, err := os.ReadFile(filepath.Join(root, "build", "oci", file))
				if err != nil {
					t.Fatal(err)
				}
				art, err := mutate.Append(mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), mediaType),
					mutate.Addendum{Layer: static.NewLayer(b, mediaType)})
				if err != nil {
					t.Fatal(err)
				}
				withSubject := mutate.Subject(art, subject).(v1.Image)
				d, err := withSubject.Digest()
				if err != nil {
					t.Fatal(err)
				}
				at, err := name.NewDigest(strings.SplitN(ref, "@", 2)[0]+"@"+d.String(), name.Insecure)
				if err != nil {
					t.Fatal(err)
				}
				if err := remote.Write(at, withSubject); err != nil {
					t.Fatalf("attaching %s: %v", file, err)
				}
				return b
			}
			referrer := func(of v1.Hash, mediaType types.MediaType, want []byte) {
				d, err := name.NewDigest(strings.SplitN(ref, "@", 2)[0]+"@"+of.String(), name.Insecure)
				if err != nil {
					t.Fatal(err)
				}
				list, err := remote.Referrers(d)
				if err != nil {
					t.Fatal(err)
				}
				lm, err := list.IndexManifest()
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range lm.Manifests {
					if r.ArtifactType != string(mediaType) {
						continue
					}
					img, err := remote.Image(d.Context().Digest(r.Digest.String()))
					if err != nil {
						t.Fatal(err)
					}
					layers, err := img.Layers()
					if err != nil || len(layers) != 1 {
						t.Fatalf("the %s referrer has %d layers: %v", mediaType, len(layers), err)
					}
					rc, err := layers[0].Uncompressed()
					if err != nil {
						t.Fatal(err)
					}
					got, _ := io.ReadAll(rc)
					_ = rc.Close()
					if !bytes.Equal(got, want) {
						t.Errorf("the %s attached to %s is not the one built", mediaType, of)
					}
					return
				}
				t.Errorf("no %s refers to %s: %+v", mediaType, of, lm.Manifests)
			}
			indexDesc := v1.Descriptor{MediaType: types.OCIImageIndex, Digest: digest}
			if raw, err := idx.RawManifest(); err == nil {
				indexDesc.Size = int64(len(raw))
			}
			prov := attach(indexDesc, "application/vnd.in-toto+json", s.target+".provenance.json")
			referrer(digest, "application/vnd.in-toto+json", prov)
			for _, d := range m.Manifests {
				arch := d.Platform.Architecture
				sbom := attach(v1.Descriptor{MediaType: d.MediaType, Digest: d.Digest, Size: d.Size}, "application/spdx+json", s.target+"."+arch+".spdx.json")
				referrer(d.Digest, "application/spdx+json", sbom)
			}
		})
	}
}

type statement struct {
	Type    string `json:"_type"`
	Subject []struct {
		Name   string            `json:"name"`
		Digest map[string]string `json:"digest"`
	} `json:"subject"`
	PredicateType string `json:"predicateType"`
	Predicate     struct {
		BuildDefinition struct {
			ExternalParameters   map[string]any `json:"externalParameters"`
			ResolvedDependencies []struct {
				URI    string            `json:"uri"`
				Digest map[string]string `json:"digest"`
			} `json:"resolvedDependencies"`
		} `json:"buildDefinition"`
	} `json:"predicate"`
}

func readProvenance(t *testing.T, target string) statement {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "build", "oci", target+".provenance.json"))
	if err != nil {
		t.Fatal(err)
	}
	var st statement
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatal(err)
	}
	return st
}

func mapValues(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

func sha256Hex(b []byte) string { return fmt.Sprintf("%x", sha256.Sum256(b)) }
