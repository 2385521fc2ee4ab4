// Package ocilayout reads what make image writes: an OCI layout holding
// one image index (build/oci/<image>), for hack/attest, hack/ocipush and
// the packaging tests alike.
package ocilayout

import (
	"fmt"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
)

// Index is the one image index the layout at dir holds, and its digest.
func Index(dir string) (v1.ImageIndex, v1.Hash, error) {
	p, err := layout.FromPath(dir)
	if err != nil {
		return nil, v1.Hash{}, err
	}
	top, err := p.ImageIndex()
	if err != nil {
		return nil, v1.Hash{}, err
	}
	m, err := top.IndexManifest()
	if err != nil {
		return nil, v1.Hash{}, err
	}
	if len(m.Manifests) != 1 || !m.Manifests[0].MediaType.IsIndex() {
		return nil, v1.Hash{}, fmt.Errorf("%s: want one image index, found %d manifests", dir, len(m.Manifests))
	}
	idx, err := top.ImageIndex(m.Manifests[0].Digest)
	if err != nil {
		return nil, v1.Hash{}, err
	}
	return idx, m.Manifests[0].Digest, nil
}
