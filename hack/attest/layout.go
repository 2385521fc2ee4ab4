package main

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"debug/buildinfo"
	"errors"
	"fmt"
	"io"
	"path"
	"sort"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"

	"github.com/c5c3/glance-krm/internal/ocilayout"
)

// index is one image index of a layout, its images by architecture.
type index struct {
	digest v1.Hash
	images map[string]*platformImage
}

type platformImage struct {
	digest      v1.Hash
	executables []content
}

// content is one executable of an image.
type content struct {
	path, arch string
	sha256     string
	build      *buildinfo.BuildInfo // nil: not a Go program
}

func readIndex(dir string) (*index, error) {
	idx, digest, err := ocilayout.Index(dir)
	if err != nil {
		return nil, err
	}
	im, err := idx.IndexManifest()
	if err != nil {
		return nil, err
	}
	out := &index{digest: digest, images: map[string]*platformImage{}}
	for _, d := range im.Manifests {
		if d.Platform == nil {
			return nil, fmt.Errorf("%s: manifest %s names no platform", dir, d.Digest)
		}
		img, err := idx.Image(d.Digest)
		if err != nil {
			return nil, err
		}
		execs, err := executables(img, d.Platform.Architecture)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", dir, d.Platform.Architecture, err)
		}
		out.images[d.Platform.Architecture] = &platformImage{digest: d.Digest, executables: execs}
	}
	return out, nil
}

// executables are the image's ELF files, by path, with their Go build
// info where they have one.
func executables(img v1.Image, arch string) ([]content, error) {
	rc := mutate.Extract(img)
	defer func() { _ = rc.Close() }()
	var out []content
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			return nil, err
		}
		if !bytes.HasPrefix(b, []byte("\x7fELF")) {
			continue
		}
		c := content{path: path.Clean("/" + h.Name), arch: arch, sha256: fmt.Sprintf("%x", sha256.Sum256(b))}
		if bi, err := buildinfo.Read(bytes.NewReader(b)); err == nil {
			c.build = bi
		}
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].path < out[j].path })
	return out, nil
}
