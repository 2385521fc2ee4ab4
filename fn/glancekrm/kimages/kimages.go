// Package kimages is the images: of the kustomization that runs the
// function. kustomize applies a kustomization's own images: before its
// transformers, so the workload glance-krm generates (and the image it
// writes into a workload it wires) would never see them: a mirror or a
// pin there would be dropped without a word. Under kustomize an exec
// function runs in the folder of the kustomization that declares it, so
// the function reads that kustomization's images: and maps every image it
// writes through them with kustomize's own image filter.
package kimages

import (
	"fmt"
	"os"
	"path/filepath"

	"sigs.k8s.io/kustomize/api/filters/imagetag"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Images are the images: of one kustomization file.
type Images struct {
	File   string
	images []types.Image
}

// Read reads the images: of the kustomization in dir; nil when dir holds
// no kustomization or it has no images:.
func Read(dir string) (*Images, error) {
	for _, name := range []string{"kustomization.yaml", "kustomization.yml", "Kustomization"} {
		file := filepath.Join(dir, name)
		b, err := os.ReadFile(file)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		var k types.Kustomization
		if err := k.Unmarshal(b); err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		k.FixKustomization()
		if len(k.Images) == 0 {
			return nil, nil
		}
		return &Images{File: file, images: k.Images}, nil
	}
	return nil, nil
}

// Apply maps an image reference through the images: as kustomize maps a
// container's image; changed tells whether one of them matched.
func (im *Images) Apply(ref string) (out string, changed bool, err error) {
	if im == nil {
		return ref, false, nil
	}
	pod, err := yaml.FromMap(map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"name": "image"},
		"spec": map[string]any{"containers": []any{map[string]any{"name": "c", "image": ref}}}})
	if err != nil {
		return "", false, err
	}
	nodes := []*yaml.RNode{pod}
	for _, img := range im.images {
		if nodes, err = (imagetag.LegacyFilter{ImageTag: img}).Filter(nodes); err != nil {
			return "", false, fmt.Errorf("%s: images: %s: %w", im.File, img.Name, err)
		}
	}
	image, err := nodes[0].Pipe(yaml.Lookup("spec", "containers", "[name=c]", "image"))
	if err != nil || image == nil {
		return "", false, fmt.Errorf("%s: images: the mapped image of %s is gone", im.File, ref)
	}
	out = yaml.GetValue(image)
	return out, out != ref, nil
}
