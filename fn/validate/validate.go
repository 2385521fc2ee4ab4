// Package validate is `glance-krm-fn validate PATH…`: the function's
// verdict on a change before it merges, each finding with the file and
// line it is about, for review tools (findings).
//
// A kustomization is built as `kustomize build --enable-alpha-plugins
// --enable-exec` builds it, with kustomize's own code, and the function
// runs where the kustomization declares it, so validate's verdict is the
// build's: patches, components, generators, name prefixes and the
// function declared in a base all count (kustomize.go). Files and other
// folders (a kpt package) are read as written and get every check of the
// function, without rendering (files.go).
package validate

import (
	"fmt"
	"os"
	"regexp"

	"github.com/c5c3/glance-krm/fn/findings"
)

// Options of Run.
type Options struct {
	// Function is the glance-krm-fn binary a kustomization's build runs as
	// its function: the running binary under `glance-krm-fn validate`.
	Function string
}

// Run checks the kustomizations and the objects under paths; ok is false
// when an error is found, err says why a path could not be judged.
func Run(paths []string, o Options) (fs []findings.Finding, ok bool, err error) {
	ok = true
	var files []string
	for _, p := range paths {
		if info, err := os.Stat(p); err != nil || !info.IsDir() || kustomizationFile(p) == "" {
			files = append(files, p)
			continue
		}
		found, good, err := buildKustomization(p, o.Function)
		if err != nil {
			return nil, false, fmt.Errorf("%s: %w", p, err)
		}
		fs, ok = append(fs, found...), ok && good
	}
	if len(files) > 0 {
		found, good, err := runFiles(files)
		if err != nil {
			return nil, false, err
		}
		fs, ok = append(fs, found...), ok && good
	}
	return fs, ok, nil
}

// separator is kyaml's document separator.
var separator = regexp.MustCompile(`\n---.*\n`)

func joinNS(ns, name string) string {
	if ns == "" {
		return name
	}
	return ns + "/" + name
}
