package validate

import (
	"os"
	"path/filepath"
	"slices"

	"sigs.k8s.io/kustomize/api/resource"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/c5c3/glance-krm/fn/findings"
)

// A locator maps the results of a build's runs to the files and lines a
// reviewer should look at.
type locator struct {
	root    *kustomization
	given   string // the root kustomization's folder as the user gave it
	byFile  map[string]*kustomization
	patches map[*kustomization][]*patch
	docs    map[string][]doc
}

func newLocator(root *kustomization, given string) *locator {
	l := &locator{root: root, given: given, byFile: map[string]*kustomization{}, patches: map[*kustomization][]*patch{}, docs: map[string][]doc{}}
	for _, k := range root.under("") {
		l.byFile[filepath.Clean(k.file)] = k
	}
	return l
}

// finding is one recorded result where it belongs.
func (l *locator) finding(r run, res recorded) findings.Finding {
	f := findings.Finding{Rule: res.Rule, Level: res.Level, Message: res.Message, Object: res.Object}
	switch {
	case res.Target != nil:
		f.File, f.Line = l.object(r, res.Target)
	case res.Object == "" && r.Config != nil:
		// about the functionConfig, or the run as a whole
		f.File, f.Line = l.inFile(r.Config, func(n *yaml.RNode) bool { return n.GetKind() == r.ConfigKind && n.GetName() == r.ConfigName }, res.Field)
	}
	return f
}

// object is where a result about t (at its field, if any) points: the
// last patch, name prefix or namespace before the run that wrote the
// value the function saw, else the object's own file.
func (l *locator) object(r run, t *target) (string, int) {
	dir := r.Dir
	if d, err := filepath.EvalSymlinks(dir); err == nil {
		dir = d
	}
	scope := l.root.under(dir)
	parts := fieldParts(t.Field)
	if len(parts) == 2 && parts[0] == "metadata" {
		if file, line := l.renamed(scope, t, parts[1]); file != "" {
			return file, line
		}
	}
	var same, wrote *hit
	if len(parts) > 0 {
		for _, k := range scope {
			for _, p := range l.patchesOf(k) {
				if h := p.writes(t, parts); h != nil {
					if wrote = h; h.same {
						same = h
					}
				}
			}
		}
	}
	if same != nil {
		return same.file, same.line
	}
	file, d := l.written(t)
	switch {
	case d != nil:
		n, depth, line := descend(d.node, parts)
		if wrote != nil && (depth < len(parts) || sum(n) != t.Sum) {
			return wrote.file, wrote.line
		}
		return file, d.offset + line
	case wrote != nil:
		return wrote.file, wrote.line
	case file != "":
		return file, 0
	}
	return l.generated(t)
}

// renamed points a result about an object's name or namespace at the
// namePrefix, nameSuffix or namespace that changed it.
func (l *locator) renamed(scope []*kustomization, t *target, field string) (string, int) {
	var values []string
	var fields []string
	switch field {
	case "name":
		values, fields = t.Names, []string{"nameSuffix", "namePrefix"}
	case "namespace":
		values, fields = t.Namespaces, []string{"namespace"}
	default:
		return "", 0
	}
	if len(values) < 2 || values[0] == values[len(values)-1] {
		return "", 0
	}
	for _, k := range slices.Backward(scope) {
		for _, f := range fields {
			if line := k.fieldLine(f); line > 0 {
				return k.file, line
			}
		}
	}
	return "", 0
}

// written is the file and document an object was written in: no file
// for a generated one, no document when the file does not hold it.
func (l *locator) written(t *target) (string, *doc) {
	if t.Origin == nil || t.Origin.Path == "" || t.Origin.Repo != "" {
		return "", nil
	}
	file := filepath.Join(l.given, t.Origin.Path)
	var found *doc
	for i, d := range l.docsOf(file) {
		n := d.node
		if !isObject(n) || n.GetKind() != t.Kind || n.GetName() != t.Names[0] {
			continue
		}
		if found == nil || n.GetNamespace() == t.Namespaces[0] {
			found = &l.docs[file][i]
		}
	}
	return file, found
}

// generated is where a generated object was configured: its generator's
// entry in a kustomization, or its generator's document.
func (l *locator) generated(t *target) (string, int) {
	o := t.Origin
	if o == nil || o.ConfiguredIn == "" || o.Repo != "" {
		return "", 0
	}
	file := filepath.Join(l.given, o.ConfiguredIn)
	if k := l.byFile[filepath.Clean(file)]; k != nil {
		var list string
		var names []string
		switch o.ConfiguredBy.Kind {
		case "ConfigMapGenerator":
			list = "configMapGenerator"
			for _, g := range k.k.ConfigMapGenerator {
				names = append(names, g.Name)
			}
		case "SecretGenerator":
			list = "secretGenerator"
			for _, g := range k.k.SecretGenerator {
				names = append(names, g.Name)
			}
		}
		if i := slices.Index(names, t.Names[0]); i >= 0 {
			if it := k.item(list, i); it != nil {
				return file, it.Line
			}
		}
		return file, 0
	}
	return l.inFile(&resource.Origin{Path: o.ConfiguredIn}, func(n *yaml.RNode) bool {
		return n.GetKind() == o.ConfiguredBy.Kind && n.GetName() == o.ConfiguredBy.Name
	}, "")
}

// inFile is the line of field in the document of an origin's file that
// match picks (the first document without one).
func (l *locator) inFile(o *resource.Origin, match func(*yaml.RNode) bool, field string) (string, int) {
	if o.Path == "" || o.Repo != "" {
		return "", 0
	}
	file := filepath.Join(l.given, o.Path)
	docs := l.docsOf(file)
	for _, d := range docs {
		if isObject(d.node) && match(d.node) {
			_, _, line := descend(d.node, fieldParts(field))
			return file, d.offset + line
		}
	}
	return file, 0
}

func (l *locator) docsOf(file string) []doc {
	if d, ok := l.docs[file]; ok {
		return d
	}
	b, err := os.ReadFile(file)
	if err != nil {
		l.docs[file] = nil
		return nil
	}
	l.docs[file] = splitDocs(string(b))
	return l.docs[file]
}

func (l *locator) patchesOf(k *kustomization) []*patch {
	if p, ok := l.patches[k]; ok {
		return p
	}
	l.patches[k] = k.patches()
	return l.patches[k]
}
