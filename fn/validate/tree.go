package validate

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"sigs.k8s.io/kustomize/api/konfig"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// A kustomization of the build, as written: what findings point into
// (patches, generators, the name prefix) and which kustomizations it
// builds on, in the order kustomize applies them.
type kustomization struct {
	file string // as findings name it (below the path the user gave)
	dir  string // absolute, symbolic links resolved: a run's working directory
	k    types.Kustomization
	node *yaml.RNode // the file's YAML, for lines
	// below are the kustomizations of resources, then of components:
	// everything they do happens before this one's own transformers.
	below []*kustomization
}

// kustomizationFile is the kustomization file of a folder, "" when it has
// none.
func kustomizationFile(dir string) string {
	for _, name := range konfig.RecognizedKustomizationFileNames() {
		if info, err := os.Stat(filepath.Join(dir, name)); err == nil && !info.IsDir() {
			return filepath.Join(dir, name)
		}
	}
	return ""
}

// readTree reads the kustomization in dir and every local one it builds
// on. A remote resource is an error: validate reads no network.
func readTree(dir string, seen map[string]*kustomization) (*kustomization, error) {
	file := kustomizationFile(dir)
	abs, err := filepath.Abs(dir)
	if err == nil {
		abs, err = filepath.EvalSymlinks(abs)
	}
	if err != nil {
		return nil, err
	}
	if k, ok := seen[abs]; ok {
		return k, nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	k := &kustomization{file: file, dir: abs}
	seen[abs] = k
	if err := k.k.Unmarshal(b); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	k.k.FixKustomization()
	if k.node, err = yaml.Parse(string(b)); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	var entries []string
	entries = append(entries, k.k.Resources...)
	entries = append(entries, k.k.Components...)
	for _, e := range entries {
		sub, err := below(dir, e, file, seen)
		if err != nil {
			return nil, err
		}
		if sub != nil {
			k.below = append(k.below, sub)
		}
	}
	// A folder of plugin configs is a kustomization whose build may make
	// any config a function (commonAnnotations, a patch, a generator's
	// options) that no file declares: validate could not keep it from
	// running, so it builds none.
	for _, list := range []struct {
		name    string
		entries []string
	}{{"transformers", k.k.Transformers}, {"generators", k.k.Generators}, {"validators", k.k.Validators}} {
		for _, e := range list.entries {
			if n, err := yaml.Parse(e); err == nil && n.YNode().Kind == yaml.MappingNode {
				continue // an inline config
			}
			path := filepath.Join(dir, e)
			if info, err := os.Stat(path); err == nil && info.IsDir() {
				return nil, fmt.Errorf("%s takes %s from the folder %s: its build may declare functions no file names, so validate does not build it; list the config files instead", file, list.name, e)
			}
			if _, err := below(dir, e, file, seen); err != nil {
				return nil, err
			}
		}
	}
	return k, nil
}

// below is the kustomization an entry of file names, nil for a file (or
// a path kustomize will report as missing).
func below(dir, entry, file string, seen map[string]*kustomization) (*kustomization, error) {
	path := filepath.Join(dir, entry)
	info, err := os.Stat(path)
	switch {
	case err != nil && remote(entry):
		return nil, fmt.Errorf("%s names the remote resource %s: validate reads no network, so it cannot build this kustomization; build it with kustomize, or validate a local copy", file, entry)
	case err != nil || !info.IsDir() || kustomizationFile(path) == "":
		return nil, nil
	}
	return readTree(path, seen)
}

// remote is kustomize's remote forms: a URL, or a git repository.
func remote(entry string) bool {
	if strings.Contains(entry, "://") || strings.HasPrefix(entry, "git@") || strings.Contains(entry, "?ref=") || strings.Contains(entry, ".git") {
		return true
	}
	for _, host := range []string{"github.com/", "gitlab.com/", "bitbucket.org/"} {
		if strings.HasPrefix(entry, host) {
			return true
		}
	}
	return false
}

// under is the kustomizations whose transformers ran before a run in
// dir (dir's and everything below it), in kustomize's order; all of them
// when dir is not in the tree.
func (k *kustomization) under(dir string) []*kustomization {
	all := k.postorder()
	for _, c := range all {
		if c.dir == dir {
			return c.postorder()
		}
	}
	return all
}

// postorder is k and everything below it, everything below first.
func (k *kustomization) postorder() []*kustomization {
	var out []*kustomization
	seen := map[*kustomization]bool{}
	var walk func(*kustomization)
	walk = func(c *kustomization) {
		if seen[c] {
			return // a cycle, which kustomize reports
		}
		seen[c] = true
		for _, b := range c.below {
			walk(b)
		}
		out = append(out, c)
	}
	walk(k)
	return out
}

// fieldLine is the line of a top-level field of the kustomization file, 0
// without it.
func (k *kustomization) fieldLine(name string) int {
	if f := k.node.Field(name); f != nil {
		return f.Key.YNode().Line
	}
	return 0
}

// item is the i-th element of a list field, nil without it.
func (k *kustomization) item(list string, i int) *yaml.Node {
	f := k.node.Field(list)
	if f == nil || f.Value.YNode().Kind != yaml.SequenceNode || i >= len(f.Value.YNode().Content) {
		return nil
	}
	return f.Value.YNode().Content[i]
}
