package glancekrm

import (
	"fmt"
	"io"

	"github.com/kptdev/krm-functions-sdk/go/fn"

	"github.com/c5c3/glance-krm/fn/findings"
)

// Filter is the function: it exits non-zero whenever an error result exists: kustomize and kpt
// judge a function by its exit code, not by the severity of its results.
// Errors and warnings also go to stderr, one line each, because kustomize
// shows a failed function's stderr but not the results in its output.
func Filter(stdin io.Reader, stdout, stderr io.Writer) int {
	in, err := io.ReadAll(stdin)
	if err != nil {
		fmt.Fprintf(stderr, "%s: reading stdin: %v\n", Name, err)
		return 1
	}
	out, results, err := Transform(in)
	if out == nil && err != nil {
		// The input never reached the function (not a ResourceList): answer
		// with a ResourceList holding one error result, so an orchestrator
		// that reads results sees why.
		results, _ = findings.Results([]findings.Finding{findings.General(findings.Error, "input", fmt.Sprintf("the input is not a ResourceList: %v", err))})
		out, _ = (&fn.ResourceList{FunctionConfig: fn.NewEmptyKubeObject(), Results: results}).ToYAML()
	}
	for _, r := range results {
		if r.Severity != fn.Info {
			fmt.Fprintln(stderr, r.String())
		}
	}
	if _, werr := stdout.Write(out); werr != nil {
		fmt.Fprintf(stderr, "%s: writing stdout: %v\n", Name, werr)
		return 1
	}
	if err != nil {
		fmt.Fprintf(stderr, "%s: failed with the errors above\n", Name)
		return 1
	}
	return 0
}
