// Package fluxsteps is what the Flux door runs before Flux: flux-steps and
// keep-history (docs/doors.md, "Flux").
package fluxsteps

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/c5c3/glance-krm/fn/glancekrm"
)

// stepHeader starts every kustomization.yaml flux-steps writes; a folder
// whose kustomization.yaml starts with legacyHeader is what an earlier
// hack/flux-prerender.sh wrote there, in one folder.
const (
	stepHeader   = "# Written by glance-krm-fn flux-steps (hack/flux-prerender.sh): "
	legacyHeader = "# Written by glance-krm's hack/flux-prerender.sh"
)

// Command is the pre-render step for Flux (hack/flux-prerender.sh): a
// kustomize build of an overlay running glance-krm on stdin; into DIR,
// one folder per wave (FluxSteps), each holding the objects of
// its wave in resources.yaml and a kustomization.yaml naming it, for a
// chain of Flux Kustomizations. The rendered copies the previous run's
// folders held and the build no longer does are carried over
// (KeepHistory), into the first folder with the rest of the
// rendered files. The single folder an earlier version wrote into DIR is
// read as the previous run and removed.
func Command(args []string, stdin io.Reader, _ io.Writer, stderr io.Writer) int {
	if len(args) != 1 || strings.HasPrefix(args[0], "-") {
		fmt.Fprintln(stderr, "usage: glance-krm-fn flux-steps DIR < build.yaml")
		return 2
	}
	dir := args[0]
	prev, legacy, err := previousSteps(dir)
	if err != nil {
		fmt.Fprintf(stderr, "%s: flux-steps: %v\n", glancekrm.Name, err)
		return 1
	}
	cur, err := io.ReadAll(stdin)
	if err != nil {
		fmt.Fprintf(stderr, "%s: reading stdin: %v\n", glancekrm.Name, err)
		return 1
	}
	if err := writeSteps(dir, prev, cur); err != nil {
		fmt.Fprintf(stderr, "%s: flux-steps: %v\n", glancekrm.Name, err)
		return 1
	}
	for _, f := range legacy {
		if err := os.Remove(f); err != nil {
			fmt.Fprintln(stderr, err)
			return 1
		}
	}
	return 0
}

// previousSteps is what the last run wrote into dir, as one stream, and
// the files of an earlier single-folder layout to remove.
func previousSteps(dir string) (prev []byte, legacy []string, err error) {
	var files []string
	for _, s := range FluxSteps {
		files = append(files, filepath.Join(dir, s, "resources.yaml"))
	}
	k, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	switch {
	case err == nil && bytes.HasPrefix(k, []byte(legacyHeader)):
		legacy = []string{filepath.Join(dir, "kustomization.yaml"), filepath.Join(dir, "resources.yaml")}
		files = append(files, legacy[1])
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return nil, nil, err
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		if len(prev) > 0 {
			prev = append(prev, "---\n"...)
		}
		prev = append(prev, b...)
		if len(b) > 0 && !bytes.HasSuffix(b, []byte("\n")) {
			prev = append(prev, '\n')
		}
	}
	return prev, legacy, nil
}

// writeSteps writes every folder, each file whole (written aside, then
// renamed), only once all of them are known to render.
func writeSteps(dir string, prev, cur []byte) error {
	kept, err := KeepHistory(prev, cur)
	if err != nil {
		return err
	}
	steps, err := SplitSteps(kept)
	if err != nil {
		return err
	}
	for i, s := range FluxSteps {
		d := filepath.Join(dir, s)
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
		after := "nothing: apply it first"
		if i > 0 {
			after = "step " + FluxSteps[i-1] + " is ready"
		}
		k := fmt.Sprintf("%sstep %s of an overlay's rendered\n# output, for a builder without plugins (Flux); apply it once %s\n# (docs/doors.md). Do not edit; render again.\napiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - resources.yaml\n",
			stepHeader, s, after)
		for _, f := range []struct {
			name string
			data []byte
		}{{"resources.yaml", steps[i]}, {"kustomization.yaml", []byte(k)}} {
			if err := writeFile(filepath.Join(d, f.name), f.data); err != nil {
				return err
			}
		}
	}
	return nil
}

func writeFile(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer func() { _ = os.Remove(tmp.Name()) }() // gone after the rename: only a failed write leaves it
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// KeepHistoryCommand is the pre-render step for Flux (README, "Flux"): a
// kustomize build's output on stdin, the output with the rendered copies
// of --previous carried over on stdout (KeepHistory).
func KeepHistoryCommand(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("keep-history", flag.ContinueOnError)
	fs.SetOutput(stderr)
	previous := fs.String("previous", "", "what keep-history wrote last time (a missing file is a first run)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	var prev []byte
	var err error
	if *previous != "" {
		if prev, err = os.ReadFile(*previous); err != nil && !os.IsNotExist(err) {
			fmt.Fprintln(stderr, err)
			return 1
		}
	}
	cur, err := io.ReadAll(stdin)
	if err != nil {
		fmt.Fprintf(stderr, "%s: reading stdin: %v\n", glancekrm.Name, err)
		return 1
	}
	out, err := KeepHistory(prev, cur)
	if err != nil {
		fmt.Fprintf(stderr, "%s: keep-history: %v\n", glancekrm.Name, err)
		return 1
	}
	if _, err := stdout.Write(out); err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	return 0
}
