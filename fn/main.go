// Command glance-krm-fn is the glance-krm KRM function: a ResourceList on
// stdin, the ResourceList with rendered objects and results on stdout.
// It runs as a kustomize transformer (exec or container), in a kpt
// pipeline, in an Argo CD config-management plugin, or by hand:
//
//	glance-krm-fn < resourcelist.yaml
package main

import (
	"fmt"
	"os"

	"github.com/kptdev/krm-functions-sdk/go/fn"

	"github.com/c5c3/glance-krm/fn/glancekrm"
)

func main() {
	if err := fn.AsMain(fn.ResourceListProcessorFunc(reportingProcess)); err != nil {
		os.Exit(1)
	}
}

// reportingProcess also prints errors and warnings on stderr: kustomize
// shows a failed function's stderr but not the results in its output.
func reportingProcess(rl *fn.ResourceList) (bool, error) {
	before := len(rl.Results)
	ok, err := glancekrm.Process(rl)
	for _, r := range rl.Results[before:] {
		if r.Severity != fn.Info {
			fmt.Fprintln(os.Stderr, r.String())
		}
	}
	return ok, err
}
