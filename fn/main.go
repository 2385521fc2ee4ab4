// Command glance-krm-fn is the glance-krm KRM function: a ResourceList on
// stdin, the ResourceList with rendered objects and results on stdout.
// It runs as a kustomize transformer (exec or container), in a kpt
// pipeline, in an Argo CD config-management plugin, or by hand:
//
//	glance-krm-fn < resourcelist.yaml
package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/kptdev/krm-functions-sdk/go/fn"

	"github.com/c5c3/glance-krm/fn/glancekrm"
	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

func main() {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case "credentials":
			os.Exit(credentials(os.Args[2:], os.Stderr))
		case "keep-history":
			os.Exit(keepHistory(os.Args[2:], os.Stdin, os.Stdout, os.Stderr))
		}
	}
	os.Exit(filter(os.Stdin, os.Stdout, os.Stderr))
}

// credentials is the init container the function wires into every
// glance-api pod: it turns the mounted credential Secrets into one
// oslo.config file (see glancekrm.WriteCredentials).
func credentials(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("credentials", flag.ContinueOnError)
	fs.SetOutput(stderr)
	from := fs.String("from", v1alpha1.MountCredentialsIn, "folder the credential Secrets are mounted at")
	to := fs.String("to", v1alpha1.MountCredentialsDir+v1alpha1.CredentialsFile, "oslo.config file to write")
	var db glancekrm.DatabaseFlags
	db.Register(fs)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if err := glancekrm.WriteCredentials(*from, *to, db.Target(), stderr); err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	return 0
}

// keepHistory is the pre-render step for Flux (README, "Flux"): a
// kustomize build's output on stdin, the output with the rendered copies
// of --previous carried over on stdout (glancekrm.KeepHistory).
func keepHistory(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("keep-history", flag.ContinueOnError)
	fs.SetOutput(stderr)
	previous := fs.String("previous", "", "what keep-history wrote last time (a missing file is a first run)")
	config := fs.String("config", "", "the function configuration the build used (RenderGlanceConfig)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	var prev, cfg []byte
	var err error
	if *previous != "" {
		if prev, err = os.ReadFile(*previous); err != nil && !os.IsNotExist(err) {
			fmt.Fprintln(stderr, err)
			return 1
		}
	}
	if *config != "" {
		if cfg, err = os.ReadFile(*config); err != nil {
			fmt.Fprintln(stderr, err)
			return 1
		}
	}
	cur, err := io.ReadAll(stdin)
	if err != nil {
		fmt.Fprintf(stderr, "%s: reading stdin: %v\n", glancekrm.Name, err)
		return 1
	}
	out, results, err := glancekrm.KeepHistory(prev, cur, cfg)
	for _, r := range results {
		if r.Severity != fn.Info {
			fmt.Fprintln(stderr, r.String())
		}
	}
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

// filter exits non-zero whenever an error result exists: kustomize and kpt
// judge a function by its exit code, not by the severity of its results.
// Errors and warnings also go to stderr, one line each, because kustomize
// shows a failed function's stderr but not the results in its output.
func filter(stdin io.Reader, stdout, stderr io.Writer) int {
	in, err := io.ReadAll(stdin)
	if err != nil {
		fmt.Fprintf(stderr, "%s: reading stdin: %v\n", glancekrm.Name, err)
		return 1
	}
	out, results, err := glancekrm.Transform(in)
	if out == nil && err != nil {
		// The input never reached the function (not a ResourceList): answer
		// with a ResourceList holding one error result, so an orchestrator
		// that reads results sees why.
		results = fn.Results{{Severity: fn.Error, Message: fmt.Sprintf("%s: the input is not a ResourceList: %v", glancekrm.Name, err)}}
		out, _ = (&fn.ResourceList{FunctionConfig: fn.NewEmptyKubeObject(), Results: results}).ToYAML()
	}
	for _, r := range results {
		if r.Severity != fn.Info {
			fmt.Fprintln(stderr, r.String())
		}
	}
	if _, werr := stdout.Write(out); werr != nil {
		fmt.Fprintf(stderr, "%s: writing stdout: %v\n", glancekrm.Name, werr)
		return 1
	}
	if err != nil {
		fmt.Fprintf(stderr, "%s: failed with the errors above\n", glancekrm.Name)
		return 1
	}
	return 0
}
