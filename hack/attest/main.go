// Command attest writes what a shipped image says of itself, from the OCI
// layout make image wrote (build/oci/<target>):
//
//   - an SPDX 2.3 SBOM per platform image (<target>.<arch>.spdx.json): the
//     image, each executable in it, and for a Go executable every module
//     its build info names (statically linked) and the Go toolchain; an
//     executable without Go build info is named by the -purl it was given
//     (the sidecar's Debian busybox), or attest fails: an SBOM that leaves
//     a binary out is worse than none;
//   - an in-toto statement with a SLSA v1 provenance predicate for the
//     index (<target>.provenance.json): the commit, the Go version, the
//     build flags, the platforms, the tools the image holds (and its
//     predicate alone, <target>.provenance.predicate.json, for cosign).
//
// Both are reproducible: their times are SOURCE_DATE_EPOCH's. The tests
// attach them to the pushed index (tests/packaging), as a release does.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

type purls map[string]string // "path@arch" → purl

func (p purls) String() string { return fmt.Sprint(map[string]string(p)) }

func (p purls) Set(v string) error {
	k, purl, ok := strings.Cut(v, "=")
	if !ok || !strings.Contains(k, "@") || !strings.HasPrefix(purl, "pkg:") {
		return fmt.Errorf("-purl %q: want path@arch=pkg:…", v)
	}
	p[k] = purl
	return nil
}

func main() {
	var o options
	o.purls = purls{}
	flag.StringVar(&o.layout, "layout", "", "the OCI layout of one image index (build/oci/<target>)")
	flag.StringVar(&o.image, "image", "", "the image's name (ghcr.io/c5c3/glance-krm-fn)")
	flag.StringVar(&o.commit, "commit", "", "the source commit")
	flag.BoolVar(&o.dirty, "dirty", false, "the tree had changes beyond the commit")
	flag.Int64Var(&o.epoch, "epoch", 0, "SOURCE_DATE_EPOCH: the documents' time")
	flag.StringVar(&o.builder, "builder", "https://github.com/c5c3/glance-krm/hack/image.sh", "who built it (the release workflow's URI)")
	flag.StringVar(&o.buildFlags, "build-flags", "CGO_ENABLED=0 go build -trimpath -ldflags='-s -w'", "how the binaries were built")
	flag.StringVar(&o.out, "out", "", "where to write (default: beside the layout)")
	flag.Var(o.purls, "purl", "path@arch=purl for an executable without Go build info (repeatable)")
	flag.Parse()
	if o.layout == "" || o.image == "" || o.commit == "" {
		fmt.Fprintln(os.Stderr, "usage: attest -layout build/oci/<target> -image <name> -commit <sha> [-epoch N] [-purl path@arch=pkg:…]")
		os.Exit(2)
	}
	if o.out == "" {
		o.out = filepath.Dir(o.layout)
	}
	written, err := run(o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "attest:", err)
		os.Exit(1)
	}
	for _, f := range written {
		fmt.Println(f)
	}
}

type options struct {
	layout, image, commit, builder, buildFlags, out string
	dirty                                           bool
	epoch                                           int64
	purls                                           purls
}

func (o options) target() string { return filepath.Base(o.layout) }

func (o options) created() time.Time { return time.Unix(o.epoch, 0).UTC() }

func run(o options) ([]string, error) {
	idx, err := readIndex(o.layout)
	if err != nil {
		return nil, err
	}
	var written []string
	arches := make([]string, 0, len(idx.images))
	for arch := range idx.images {
		arches = append(arches, arch)
	}
	sort.Strings(arches)
	var contents []content
	for _, arch := range arches {
		img := idx.images[arch]
		doc, err := sbom(o, arch, img)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", o.image, arch, err)
		}
		f := filepath.Join(o.out, o.target()+"."+arch+".spdx.json")
		if err := writeJSON(f, doc); err != nil {
			return nil, err
		}
		written = append(written, f)
		contents = append(contents, img.executables...)
	}
	st, err := provenance(o, idx, arches, contents)
	if err != nil {
		return nil, err
	}
	f := filepath.Join(o.out, o.target()+".provenance.json")
	if err := writeJSON(f, st); err != nil {
		return nil, err
	}
	// cosign attest takes the predicate and makes the statement itself
	// (its subject: the digest it signs).
	pf := filepath.Join(o.out, o.target()+".provenance.predicate.json")
	if err := writeJSON(pf, st["predicate"]); err != nil {
		return nil, err
	}
	return append(written, f, pf), nil
}

// writeJSON writes v as indented JSON through encoding/json, whose output
// is stable (protojson's spacing deliberately is not).
func writeJSON(path string, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}
