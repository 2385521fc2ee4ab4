package explain

import (
	"bytes"
	"fmt"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// objects reads the Kubernetes objects of a file: multi-document YAML, a
// ResourceList (kpt, a function's output) or a List (what `kubectl get
// -o yaml` writes), each unwrapped. Whatever is not an object (a scalar,
// a mapping without apiVersion, kind and metadata.name), a run of the
// function that failed, and two objects of one identity (two renders
// concatenated) are errors: a reviewer must never be told "nothing
// changed" about a file explain could not read whole.
func objects(b []byte) ([]*yaml.RNode, error) {
	docs, err := (&kio.ByteReader{Reader: bytes.NewReader(b), OmitReaderAnnotations: true, DisableUnwrapping: true}).Read()
	if err != nil {
		return nil, err
	}
	var out []*yaml.RNode
	for i, d := range docs {
		if err := flatten(d, fmt.Sprintf("document %d", i+1), &out); err != nil {
			return nil, err
		}
	}
	seen := map[string]string{}
	for _, n := range out {
		id := identity(n)
		if where, dup := seen[id]; dup {
			return nil, fmt.Errorf("not one render: %s appears twice (%s, and again later): two renders concatenated, or a copied file not renamed", describe(n), where)
		}
		seen[id] = describe(n)
	}
	return out, nil
}

// flatten appends an object, or the items of a list of them.
func flatten(n *yaml.RNode, where string, out *[]*yaml.RNode) error {
	if n.YNode().Kind != yaml.MappingNode {
		return fmt.Errorf("not a render: %s is not an object but a %s", where, nodeKind(n))
	}
	kind := n.GetKind()
	if kind == "ResourceList" {
		if msg := failedRun(n); msg != "" {
			return fmt.Errorf("not a render: it is a run of the function that failed (its results hold errors, the first: %s)", msg)
		}
	}
	if items := n.Field("items"); items != nil && (kind == "ResourceList" || strings.HasSuffix(kind, "List")) {
		if items.Value.YNode().Kind != yaml.SequenceNode {
			return fmt.Errorf("not a render: the items of %s (a %s) are not a list", where, kind)
		}
		els, err := items.Value.Elements()
		if err != nil {
			return err
		}
		for i, e := range els {
			if err := flatten(e, fmt.Sprintf("item %d of %s (a %s)", i+1, where, kind), out); err != nil {
				return err
			}
		}
		return nil
	}
	if kind == "ResourceList" {
		return fmt.Errorf("not a render: %s is a ResourceList without items", where)
	}
	if n.GetApiVersion() == "" || kind == "" || n.GetName() == "" {
		return fmt.Errorf("not a render: %s is not a Kubernetes object (it has no apiVersion, kind or metadata.name)", where)
	}
	*out = append(*out, n)
	return nil
}

// identity is what the API server keys an object by: group, kind,
// namespace and name (two versions of one group are one object).
func identity(n *yaml.RNode) string {
	group, _, found := strings.Cut(n.GetApiVersion(), "/")
	if !found {
		group = ""
	}
	return group + "/" + n.GetKind() + "/" + n.GetNamespace() + "/" + n.GetName()
}

func describe(n *yaml.RNode) string {
	if ns := n.GetNamespace(); ns != "" {
		return fmt.Sprintf("%s %s/%s (%s)", n.GetKind(), ns, n.GetName(), n.GetApiVersion())
	}
	return fmt.Sprintf("%s %s (%s)", n.GetKind(), n.GetName(), n.GetApiVersion())
}

func nodeKind(n *yaml.RNode) string {
	switch n.YNode().Kind {
	case yaml.ScalarNode:
		return "scalar"
	case yaml.SequenceNode:
		return "list"
	case yaml.AliasNode:
		return "alias"
	}
	return "document"
}
