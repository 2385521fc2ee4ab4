package validate

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/c5c3/glance-krm/fn/findings"
)

// Command gives the function's verdict on kustomizations (as the
// build gives it), files and folders (package validate): exit 1 when an
// error is found, 2 for bad flags, unreadable input or a build that fails
// in kustomize. With --record it is the function in validate's own build.
func Command(args []string, stdin io.Reader, stdout, stderr io.Writer, tool findings.Tool, function func(io.Reader, io.Writer, io.Writer) int) int {
	fs := flag.NewFlagSet("validate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: %s [--format text|sarif|github] PATH...\n\nPATH: a kustomization's folder (built as kustomize build --enable-alpha-plugins --enable-exec builds it, the function running where it is declared),\nYAML files, or other folders (every YAML file below, as written: a kpt package's).\nExit codes: 0 no error, 1 an error found, 2 usage, unreadable input, or a build that fails in kustomize.\n\n", tool.Name)
		fs.PrintDefaults()
	}
	format := fs.String("format", findings.FormatText, "text, sarif (code scanning) or github (workflow annotations)")
	record := fs.String(FlagRecord, "", "internal: run as the function in validate's own kustomize build, recording the results in this folder")
	refuse := fs.String(FlagRefuse, "", "internal: with --"+FlagRecord+", the function declared in the build that validate does not run")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *record != "" {
		return AsFunction(*record, *refuse, stdin, stdout, stderr, function)
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return 2
	}
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", tool.Name, err)
		return 2
	}
	found, ok, err := Run(fs.Args(), Options{Function: self})
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", tool.Name, err)
		return 2
	}
	if err := findings.Write(stdout, *format, tool, found); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", tool.Name, err)
		return 2
	}
	if !ok {
		return 1
	}
	return 0
}
