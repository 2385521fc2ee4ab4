// Command ocipush pushes the one image index of an OCI layout (make
// image's build/oci/<target>) to a registry, children first, and prints
// what a release signs: the index by digest, then each platform image's
// digest ("linux/arm64 sha256:…"). Credentials come from the usual places
// (docker's config.json, podman's auth.json).
// Usage: ocipush [-insecure] LAYOUT REPOSITORY:TAG
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/c5c3/glance-krm/internal/ocilayout"
)

func main() {
	insecure := flag.Bool("insecure", false, "plain http (a registry on loopback)")
	flag.Parse()
	if flag.NArg() != 2 {
		fmt.Fprintln(os.Stderr, "usage: ocipush [-insecure] LAYOUT REPOSITORY:TAG")
		os.Exit(2)
	}
	if err := push(flag.Arg(0), flag.Arg(1), *insecure); err != nil {
		fmt.Fprintln(os.Stderr, "ocipush:", err)
		os.Exit(1)
	}
}

func push(dir, to string, insecure bool) error {
	var opts []name.Option
	if insecure {
		opts = append(opts, name.Insecure)
	}
	tag, err := name.NewTag(to, opts...)
	if err != nil {
		return err
	}
	idx, digest, err := ocilayout.Index(dir)
	if err != nil {
		return err
	}
	if err := remote.WriteIndex(tag, idx, remote.WithAuthFromKeychain(authn.DefaultKeychain)); err != nil {
		return err
	}
	fmt.Printf("%s@%s\n", tag.Context(), digest)
	im, err := idx.IndexManifest()
	if err != nil {
		return err
	}
	for _, d := range im.Manifests {
		fmt.Printf("%s/%s %s\n", d.Platform.OS, d.Platform.Architecture, d.Digest)
	}
	return nil
}
