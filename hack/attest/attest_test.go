package main

import (
	"debug/buildinfo"
	"os"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

func testImage(t *testing.T, execs ...content) (options, *platformImage) {
	t.Helper()
	o := options{layout: "build/oci/fn", image: "ghcr.io/c5c3/glance-krm-fn", commit: "abc123", epoch: 1, purls: purls{}}
	return o, &platformImage{digest: v1.Hash{Algorithm: "sha256", Hex: strings.Repeat("a", 64)}, executables: execs}
}

// An executable the SBOM cannot name fails the SBOM, naming the file and
// the flag that would name it.
func TestSBOMRefusesAnUnnamedExecutable(t *testing.T) {
	o, img := testImage(t, content{path: "/bin/busybox", arch: "arm64", sha256: "00"})
	if _, err := sbom(o, "arm64", img); err == nil || !strings.Contains(err.Error(), "-purl /bin/busybox@arm64") {
		t.Fatalf("want a refusal naming -purl /bin/busybox@arm64, got %v", err)
	}
	o.purls["/bin/busybox@arm64"] = "pkg:deb/debian/busybox-static@1%3A1.35?arch=arm64"
	doc, err := sbom(o, "arm64", img)
	if err != nil {
		t.Fatal(err)
	}
	if p := doc.Packages[0]; p.PackageName != "busybox" || p.PackageVersion != "1:1.35" {
		t.Errorf("busybox is %s %s, want its Debian version", p.PackageName, p.PackageVersion)
	}
}

// A Go executable's modules (this test binary's own build info) are
// packages it statically links; a development build takes the commit.
func TestSBOMNamesGoModules(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bi, err := buildinfo.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	o, img := testImage(t, content{path: "/usr/local/bin/x", arch: "amd64", sha256: "00", build: bi})
	doc, err := sbom(o, "amd64", img)
	if err != nil {
		t.Fatal(err)
	}
	linked := map[string]bool{}
	for _, r := range doc.Relationships {
		if r.Relationship == "STATIC_LINK" {
			linked[string(r.RefB.ElementRefID)] = true
		}
	}
	if len(bi.Deps) == 0 || len(linked) != len(bi.Deps)+1 {
		t.Errorf("%d modules and the standard library linked, %d in the SBOM", len(bi.Deps), len(linked))
	}
	for _, p := range doc.Packages {
		if p.PackageFileName == "/usr/local/bin/x" && bi.Main.Version == "(devel)" && p.PackageVersion != "abc123" {
			t.Errorf("a development build's version is %q, want the commit", p.PackageVersion)
		}
	}
}
