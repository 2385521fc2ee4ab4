package main

import (
	"fmt"
	"net/url"
	"path"
	"regexp"
	"runtime/debug"
	"sort"
	"strings"
	"time"

	"github.com/spdx/tools-golang/spdx/v2/common"
	spdx "github.com/spdx/tools-golang/spdx/v2/v2_3"
	"github.com/spdx/tools-golang/spdxlib"
)

// sbom is the SPDX document of one platform image.
func sbom(o options, arch string, img *platformImage) (*spdx.Document, error) {
	hex := img.digest.Hex
	d := &sbomDoc{doc: &spdx.Document{
		SPDXVersion:       spdx.Version,
		DataLicense:       spdx.DataLicense,
		SPDXIdentifier:    "DOCUMENT",
		DocumentName:      o.image + " linux/" + arch,
		DocumentNamespace: "https://github.com/c5c3/glance-krm/spdx/" + o.target() + "/" + arch + "/sha256-" + hex,
		CreationInfo: &spdx.CreationInfo{
			Creators: []common.Creator{{CreatorType: "Tool", Creator: "glance-krm-attest"}, {CreatorType: "Organization", Creator: "c5c3"}},
			Created:  o.created().Format(time.RFC3339),
		},
	}, packages: map[common.ElementID]*spdx.Package{}}

	repo, name := path.Split(o.image)
	image := &spdx.Package{
		PackageName: o.image, PackageSPDXIdentifier: "Package-image", PackageVersion: img.digest.String(),
		PackageDownloadLocation: "NOASSERTION", PrimaryPackagePurpose: "CONTAINER",
		PackageExternalReferences: []*spdx.PackageExternalReference{purl("pkg:oci/" + name + "@" + url.PathEscape(img.digest.String()) +
			"?arch=" + arch + "&repository_url=" + url.QueryEscape(strings.TrimSuffix(repo, "/")+"/"+name))},
	}
	d.add(image)
	d.relate("DOCUMENT", "DESCRIBES", image.PackageSPDXIdentifier)
	for _, c := range img.executables {
		exe, err := executable(o, arch, c)
		if err != nil {
			return nil, err
		}
		d.add(exe)
		d.relate(image.PackageSPDXIdentifier, "CONTAINS", exe.PackageSPDXIdentifier)
		if c.build != nil {
			d.goModules(exe, c.build)
		}
	}
	return d.finish()
}

// sbomDoc is an SPDX document being written: each package once.
type sbomDoc struct {
	doc      *spdx.Document
	packages map[common.ElementID]*spdx.Package
}

func (d *sbomDoc) add(p *spdx.Package) {
	if _, ok := d.packages[p.PackageSPDXIdentifier]; !ok {
		d.packages[p.PackageSPDXIdentifier] = p
	}
}

func (d *sbomDoc) relate(a common.ElementID, rel string, b common.ElementID) {
	d.doc.Relationships = append(d.doc.Relationships, &spdx.Relationship{
		RefA: common.MakeDocElementID("", string(a)), RefB: common.MakeDocElementID("", string(b)), Relationship: rel})
}

// executable is the package of one program of the image: its Go build
// info, or the purl given for it.
func executable(o options, arch string, c content) (*spdx.Package, error) {
	exe := &spdx.Package{
		PackageName: path.Base(c.path), PackageSPDXIdentifier: id("Package-exe", c.path), PackageFileName: c.path,
		PackageDownloadLocation: "NOASSERTION", PrimaryPackagePurpose: "APPLICATION",
		PackageChecksums: []common.Checksum{{Algorithm: common.SHA256, Value: c.sha256}},
	}
	switch {
	case c.build != nil:
		version := c.build.Main.Version
		if version == "" || version == "(devel)" {
			// Built from this checkout (-trimpath and no VCS stamping
			// here): the commit is the version.
			version = o.commit
		}
		exe.PackageVersion = version
		exe.PackageExternalReferences = []*spdx.PackageExternalReference{purl("pkg:golang/" + c.build.Main.Path + "@" + version)}
		exe.PackageComment = "Go " + c.build.GoVersion + ", module " + c.build.Main.Path + ", built with " + settings(c.build.Settings)
	case o.purls[c.path+"@"+arch] != "":
		p := o.purls[c.path+"@"+arch]
		exe.PackageExternalReferences = []*spdx.PackageExternalReference{purl(p)}
		if _, v, ok := strings.Cut(strings.SplitN(p, "?", 2)[0], "@"); ok {
			exe.PackageVersion, _ = url.PathUnescape(v)
		}
	default:
		return nil, fmt.Errorf("%s has no Go build info and no -purl %s@%s: the SBOM cannot name it", c.path, c.path, arch)
	}
	return exe, nil
}

// goModules are what a Go program links statically: the standard
// library and each module of its build info.
func (d *sbomDoc) goModules(exe *spdx.Package, build *debug.BuildInfo) {
	std := &spdx.Package{PackageName: "stdlib", PackageSPDXIdentifier: id("Package-go-stdlib", build.GoVersion),
		PackageVersion: build.GoVersion, PackageDownloadLocation: "https://go.dev/dl/", PrimaryPackagePurpose: "LIBRARY",
		PackageExternalReferences: []*spdx.PackageExternalReference{purl("pkg:golang/stdlib@" + build.GoVersion)}}
	d.add(std)
	d.relate(exe.PackageSPDXIdentifier, "STATIC_LINK", std.PackageSPDXIdentifier)
	for _, dep := range build.Deps {
		if dep.Replace != nil {
			dep = dep.Replace
		}
		mod := &spdx.Package{PackageName: dep.Path, PackageSPDXIdentifier: id("Package-go", dep.Path+"-"+dep.Version),
			PackageVersion: dep.Version, PackageDownloadLocation: "NOASSERTION", PrimaryPackagePurpose: "LIBRARY",
			PackageExternalReferences: []*spdx.PackageExternalReference{purl("pkg:golang/" + dep.Path + "@" + dep.Version)}}
		if dep.Sum != "" {
			mod.PackageComment = "go.sum " + dep.Sum
		}
		d.add(mod)
		d.relate(exe.PackageSPDXIdentifier, "STATIC_LINK", mod.PackageSPDXIdentifier)
	}
}

// finish lists the packages in a stable order and validates the document.
func (d *sbomDoc) finish() (*spdx.Document, error) {
	ids := make([]string, 0, len(d.packages))
	for k := range d.packages {
		ids = append(ids, string(k))
	}
	sort.Strings(ids)
	for _, k := range ids {
		d.doc.Packages = append(d.doc.Packages, d.packages[common.ElementID(k)])
	}
	if err := spdxlib.ValidateDocument(d.doc); err != nil {
		return nil, fmt.Errorf("the SPDX document does not validate: %w", err)
	}
	return d.doc, nil
}

func purl(p string) *spdx.PackageExternalReference {
	return &spdx.PackageExternalReference{Category: common.CategoryPackageManager, RefType: common.TypePackageManagerPURL, Locator: p}
}

var notID = regexp.MustCompile(`[^A-Za-z0-9.]+`)

// id is an SPDX element ID: letters, digits, dots and dashes.
func id(prefix, s string) common.ElementID {
	return common.ElementID(prefix + "-" + strings.Trim(notID.ReplaceAllString(s, "-"), "-"))
}

func settings(s []debug.BuildSetting) string {
	var out []string
	for _, kv := range s {
		out = append(out, kv.Key+"="+kv.Value)
	}
	return strings.Join(out, " ")
}
