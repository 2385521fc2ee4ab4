package validate

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/distribution/reference"
	"sigs.k8s.io/kustomize/api/konfig"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/kustomize/kyaml/fn/runtime/runtimeutil"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/c5c3/glance-krm/fn/glancekrm"
)

// view is the file system validate's kustomize build reads: the disk,
// read-only, as kustomize would read it, but
//   - the root kustomization asks for buildMetadata: [originAnnotations],
//     so that every object the function sees says which file it came from;
//   - every function declaration (a config.kubernetes.io/function
//     annotation, or kustomize's older forms) runs this binary as an exec
//     function (AsFunction): a glance-krm declaration as itself, recording
//     its results, any other one refusing to run, so that validate never
//     runs a program the kustomization names.
//
// (kustomize looks for exec and Go plugins on the disk, whatever file
// system it reads: buildKustomization gives it an empty plugin home.)
type view struct {
	filesys.FileSystem
	root    string // the root kustomization's folder, absolute
	given   string // the same as the user gave it, for the paths findings name
	self    string // this binary
	records string // where each run leaves its record
}

var errReadOnly = errors.New("validate writes nothing")

func newView(given, self, records string) (*view, error) {
	// kustomize reads a kustomization from its real path.
	root, err := filepath.Abs(given)
	if err == nil {
		root, err = filepath.EvalSymlinks(root)
	}
	if err != nil {
		return nil, err
	}
	return &view{FileSystem: filesys.MakeFsOnDisk(), root: root, given: given, self: self, records: records}, nil
}

func (v *view) Create(string) (filesys.File, error) { return nil, errReadOnly }
func (v *view) Mkdir(string) error                  { return errReadOnly }
func (v *view) MkdirAll(string) error               { return errReadOnly }
func (v *view) RemoveAll(string) error              { return errReadOnly }
func (v *view) WriteFile(string, []byte) error      { return errReadOnly }

// ReadFile is the file as written but for the changes above.
func (v *view) ReadFile(path string) ([]byte, error) {
	b, err := v.FileSystem.ReadFile(path)
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	if slices.Contains(konfig.RecognizedKustomizationFileNames(), filepath.Base(abs)) {
		return v.kustomization(abs, b)
	}
	out, err := v.functions(b, v.display(abs))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", v.display(abs), err)
	}
	return out, nil
}

// display is a path as findings name it: below the path the user gave.
func (v *view) display(abs string) string {
	rel, err := filepath.Rel(v.root, abs)
	if err != nil {
		return abs
	}
	return filepath.Join(v.given, rel)
}

// kustomization rewrites the inline function declarations of a
// kustomization file, and asks the root one for origin annotations.
func (v *view) kustomization(abs string, b []byte) ([]byte, error) {
	k, err := yaml.Parse(string(b))
	if err != nil {
		return b, nil // kustomize reports it
	}
	changed := false
	for _, list := range []string{"transformers", "generators", "validators"} {
		seq := k.Field(list)
		if seq == nil || seq.Value.YNode().Kind != yaml.SequenceNode {
			continue
		}
		for _, item := range seq.Value.YNode().Content {
			// Inline is whatever parses as an object, on one line too
			// (kustomize's own test); a path declares nothing.
			if item.Kind != yaml.ScalarNode {
				continue
			}
			out, err := v.functions([]byte(item.Value), v.display(abs))
			if err != nil {
				return nil, fmt.Errorf("%s: %s: %w", v.display(abs), list, err)
			}
			if string(out) != item.Value {
				item.Value, changed = string(out), true
			}
		}
	}
	if filepath.Dir(abs) == v.root {
		meta, err := k.Pipe(yaml.LookupCreate(yaml.SequenceNode, "buildMetadata"))
		if err != nil {
			return nil, fmt.Errorf("%s: buildMetadata: %w", v.display(abs), err)
		}
		if !slices.ContainsFunc(meta.YNode().Content, func(n *yaml.Node) bool { return n.Value == "originAnnotations" }) {
			meta.YNode().Content = append(meta.YNode().Content, &yaml.Node{Kind: yaml.ScalarNode, Value: "originAnnotations"})
			meta.YNode().Style = 0
			changed = true
		}
	}
	if !changed {
		return b, nil
	}
	s, err := k.String()
	return []byte(s), err
}

// functions points every function declared in the documents of b at this
// binary, and returns b itself when none is. Every document is parsed, as
// kustomize parses it, and asked as kustomize asks it
// (runtimeutil.GetFunctionSpec): a declaration is found however it is
// spelt. What does not parse is no object kustomize could run a function
// from.
func (v *view) functions(b []byte, where string) ([]byte, error) {
	docs, err := (&kio.ByteReader{Reader: bytes.NewReader(b), OmitReaderAnnotations: true}).Read()
	if err != nil {
		return b, nil
	}
	nodes := slices.Clone(docs)
	changed := false
	for len(nodes) > 0 {
		n := nodes[0]
		nodes = nodes[1:]
		if n.YNode().Kind != yaml.MappingNode {
			continue // a JSON 6902 patch, a list of data: no object
		}
		if items := n.Field("items"); strings.HasSuffix(n.GetKind(), "List") && items != nil && items.Value.YNode().Kind == yaml.SequenceNode {
			// kustomize reads a FooList as its items (resource.Factory)
			for _, it := range items.Value.YNode().Content {
				nodes = append(nodes, yaml.NewRNode(it))
			}
			continue
		}
		if _, err := n.GetMeta(); err != nil {
			continue // no object: kustomize runs no function from it either
		}
		args := []string{"validate", "--" + FlagRecord, v.records}
		spec, err := runtimeutil.GetFunctionSpec(n)
		switch {
		case err != nil:
			// kustomize fails on it as a plugin config, and passes it on as
			// an object: either way, validate must not run it.
			args = append(args, "--"+FlagRefuse, fmt.Sprintf("a function declaration of %s %s in %s it cannot read (%v)", n.GetKind(), n.GetName(), where, err))
		case spec == nil:
			continue
		case !isGlanceKRM(n, spec):
			args = append(args, "--"+FlagRefuse, describe(n, spec, where))
		}
		if err := v.runSelf(n, args); err != nil {
			return nil, err
		}
		changed = true
	}
	if !changed {
		return b, nil
	}
	var buf bytes.Buffer
	err = kio.ByteWriter{Writer: &buf}.Write(docs)
	return buf.Bytes(), err
}

// runSelf makes n declare this binary, with args, as its only function.
func (v *view) runSelf(n *yaml.RNode, args []string) error {
	spec, err := yaml.Marshal(map[string]any{"exec": map[string]any{"path": v.self, "args": args}})
	if err != nil {
		return err
	}
	for _, k := range []string{"config.k8s.io/function", "config.kubernetes.io/container"} {
		if _, err := n.Pipe(yaml.ClearAnnotation(k)); err != nil {
			return err
		}
	}
	if _, err := n.Pipe(yaml.Lookup("metadata"), yaml.Clear("configFn")); err != nil {
		return err
	}
	return n.PipeE(yaml.SetAnnotation(runtimeutil.FunctionAnnotationKey, string(spec)))
}

// isGlanceKRM: the function's own config kind, or the function's binary
// or image by name.
func isGlanceKRM(n *yaml.RNode, spec *runtimeutil.FunctionSpec) bool {
	if n.GetApiVersion() == glancekrm.ConfigAPIVersion && n.GetKind() == glancekrm.ConfigKind {
		return true
	}
	if spec.Exec.Path != "" {
		return filepath.Base(spec.Exec.Path) == "glance-krm-fn"
	}
	if ref, err := reference.ParseNormalizedNamed(spec.Container.Image); err == nil {
		return filepath.Base(reference.Path(ref)) == "glance-krm-fn"
	}
	return false
}

func describe(n *yaml.RNode, spec *runtimeutil.FunctionSpec, where string) string {
	runs := "image " + spec.Container.Image
	if spec.Exec.Path != "" {
		runs = "exec " + spec.Exec.Path
	}
	return fmt.Sprintf("the function %s %s (%s) declared in %s", n.GetKind(), n.GetName(), runs, where)
}
