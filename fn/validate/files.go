package validate

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/c5c3/glance-krm/fn/findings"
	"github.com/c5c3/glance-krm/fn/glancekrm"
)

// runFiles checks the objects of files and folders as written.
func runFiles(paths []string) (fs []findings.Finding, ok bool, err error) {
	var nodes []*yaml.RNode
	for _, p := range paths {
		read, err := readPath(p)
		if err != nil {
			return nil, false, fmt.Errorf("%s: %w", p, err)
		}
		nodes = append(nodes, read...)
	}
	// Where each object starts, by file and index, for its findings.
	at := map[string]*yaml.RNode{}
	rl := &fn.ResourceList{FunctionConfig: fn.NewEmptyKubeObject()}
	for _, n := range nodes {
		path, index := position(n)
		at[path+"#"+strconv.Itoa(index)] = n
		if n.GetApiVersion() == glancekrm.ConfigAPIVersion && n.GetKind() == glancekrm.ConfigKind {
			rl.FunctionConfig = fn.MoveToKubeObject(n.Copy())
			continue
		}
		rl.Items = append(rl.Items, fn.MoveToKubeObject(n.Copy()))
	}
	ok = glancekrm.Validate(rl)
	offsets := map[string][]int{}
	for _, r := range rl.Results {
		f := findings.FromResult(r)
		if r.ResourceRef != nil {
			f.Object = strings.TrimSpace(r.ResourceRef.Kind + " " + joinNS(r.ResourceRef.Namespace, r.ResourceRef.Name))
		}
		if r.File != nil {
			f.File = r.File.Path
			if n := at[r.File.Path+"#"+strconv.Itoa(r.File.Index)]; n != nil {
				if _, done := offsets[r.File.Path]; !done {
					offsets[r.File.Path] = docOffsets(r.File.Path)
				}
				if o := offsets[r.File.Path]; r.File.Index < len(o) {
					f.Line = o[r.File.Index] + line(n, r.Field)
				}
			}
		}
		fs = append(fs, f)
	}
	return fs, ok, nil
}

// hidden skips what a package keeps for itself (.expected/, .git/).
func hidden(rel string) bool {
	return slices.ContainsFunc(strings.Split(filepath.ToSlash(rel), "/"), func(c string) bool { return strings.HasPrefix(c, ".") && c != "." && c != ".." })
}

// docOffsets are the lines before each object of a file, in the reader's
// order: kyaml numbers a node's line within its own document.
func docOffsets(path string) []int {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	text := strings.ReplaceAll(string(b), "\r\n", "\n")
	var out []int
	prev := 0
	emit := func(doc string, start int) {
		if nodes, err := (&kio.ByteReader{Reader: strings.NewReader(doc)}).Read(); err == nil && len(nodes) > 0 {
			out = append(out, strings.Count(text[:start], "\n"))
		}
	}
	for _, loc := range separator.FindAllStringIndex(text, -1) {
		emit(text[prev:loc[0]], prev)
		prev = loc[1]
	}
	emit(text[prev:], prev)
	return out
}

// readPath reads a file, or every YAML file of a folder and its
// subfolders, each object annotated with its file (as given, joined) and
// index in it.
func readPath(p string) ([]*yaml.RNode, error) {
	info, err := os.Stat(p)
	if err != nil {
		return nil, err
	}
	var nodes []*yaml.RNode
	if info.IsDir() {
		nodes, err = (&kio.LocalPackageReader{PackagePath: p, IncludeSubpackages: true, PreserveSeqIndent: true, FileSkipFunc: hidden}).Read()
	} else {
		var b []byte
		if b, err = os.ReadFile(p); err == nil {
			nodes, err = (&kio.ByteReader{Reader: bytes.NewReader(b)}).Read()
		}
	}
	if err != nil {
		return nil, err
	}
	for _, n := range nodes {
		path, index := position(n)
		if info.IsDir() {
			path = filepath.Join(p, path)
		} else {
			path = p
		}
		for k, v := range map[string]string{kioutil.PathAnnotation: path, kioutil.IndexAnnotation: strconv.Itoa(index)} {
			if err := n.PipeE(yaml.SetAnnotation(k, v)); err != nil {
				return nil, err
			}
		}
	}
	return nodes, nil
}

func position(n *yaml.RNode) (string, int) {
	path, index, _ := kioutil.GetFileAnnotations(n)
	i, _ := strconv.Atoi(index)
	return path, i
}

// line is where a field starts in its file, else where the object does.
func line(n *yaml.RNode, f *fn.Field) int {
	l := n.YNode().Line
	if f == nil || f.Path == "" {
		return l
	}
	cur := n
	for _, part := range strings.FieldsFunc(f.Path, func(r rune) bool { return r == '.' || r == '[' || r == ']' }) {
		var next *yaml.RNode
		switch {
		case cur.YNode().Kind == yaml.MappingNode:
			if fld := cur.Field(part); fld != nil {
				next = fld.Value
				l = fld.Key.YNode().Line
			}
		case cur.YNode().Kind == yaml.SequenceNode:
			if i, err := strconv.Atoi(part); err == nil && i < len(cur.YNode().Content) {
				next = yaml.NewRNode(cur.YNode().Content[i])
				l = next.YNode().Line
			}
		}
		if next == nil {
			break
		}
		cur = next
	}
	return l
}
