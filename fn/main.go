// Command glance-krm-fn is the glance-krm KRM function: a ResourceList on
// stdin, the ResourceList with rendered objects and results on stdout.
// It runs as a kustomize transformer (exec or container), in a kpt
// pipeline, in an Argo CD config-management plugin, or by hand:
//
//	glance-krm-fn < resourcelist.yaml
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/kio"

	"github.com/c5c3/glance-krm/fn/credentials"
	"github.com/c5c3/glance-krm/fn/explain"
	"github.com/c5c3/glance-krm/fn/findings"
	"github.com/c5c3/glance-krm/fn/glancekrm"
	"github.com/c5c3/glance-krm/fn/validate"
	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

func main() {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case "credentials":
			os.Exit(runCredentials(os.Args[2:], os.Stderr))
		case "keep-history":
			os.Exit(keepHistory(os.Args[2:], os.Stdin, os.Stdout, os.Stderr))
		case "flux-steps":
			os.Exit(fluxSteps(os.Args[2:], os.Stdin, os.Stderr))
		case "explain":
			os.Exit(explainChange(os.Args[2:], os.Stdout, os.Stderr))
		case "validate":
			os.Exit(validateFiles(os.Args[2:], os.Stdout, os.Stderr))
		}
	}
	os.Exit(filter(os.Stdin, os.Stdout, os.Stderr))
}

// runCredentials is the init container the function wires into every
// glance-api pod: it turns the mounted credential Secrets into one
// oslo.config file (see credentials.Write).
func runCredentials(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("credentials", flag.ContinueOnError)
	fs.SetOutput(stderr)
	from := fs.String("from", v1alpha1.MountCredentialsIn, "folder the credential Secrets are mounted at")
	to := fs.String("to", v1alpha1.MountCredentialsDir+v1alpha1.CredentialsFile, "oslo.config file to write")
	var db credentials.Flags
	db.Register(fs)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if err := credentials.Write(*from, *to, db.Target(), stderr); err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	return 0
}

// Exit codes of explain, for CI to gate on.
const (
	explainOK      = 0 // nothing blocks
	explainBlocked = 1 // a blocking warning is not acknowledged
	explainUsage   = 2 // bad flags or a render that cannot be read
)

// explainChange prints what the change from one render to another does
// (package explain).
func explainChange(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("explain", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: %s explain [flags] BEFORE AFTER\n\nBEFORE and AFTER are two renders: files (kustomize build output or a ResourceList; - for stdin),\nor folders (a kustomization, built with $KUSTOMIZE or kustomize; a rendered kpt package, read as it is).\nExit codes: 0 nothing blocks, 1 a blocking warning is not acknowledged, 2 usage or unreadable input.\n\n", glancekrm.Name)
		fs.PrintDefaults()
	}
	format := fs.String("format", explain.FormatText, "text, markdown, json, sarif (code scanning) or github (workflow annotations)")
	failOn := fs.String("fail-on", explain.StoreRemoved, "comma-separated warning kinds that block (exit 1): "+strings.Join(explain.Kinds, ", ")+"; empty for none ("+explain.GlanceRemoved+" and "+explain.StoreRenamed+" block whenever "+explain.StoreRemoved+" does, "+explain.ReleaseDowngrade+" always)")
	var acks stringList
	fs.Var(&acks, "acknowledge", "a warning ID a reviewer accepts (repeatable)")
	var records stringList
	fs.Var(&records, "drain-record", "a file with a store drain's record, as `kubectl get configmap <glance>-store-drain-<store> -o yaml` prints it (repeatable): a store removed after its drain completed passes")
	if err := fs.Parse(args); err != nil {
		return explainUsage
	}
	if fs.NArg() != 2 {
		fs.Usage()
		return explainUsage
	}
	var renders [2]*explain.Render
	for i, name := range fs.Args() {
		b, err := readRender(name)
		if err == nil {
			renders[i], err = explain.Read(b)
		}
		if err != nil {
			fmt.Fprintf(stderr, "%s explain: %s: %v\n", glancekrm.Name, name, err)
			return explainUsage
		}
	}
	opts := explain.Options{FailOn: []string{}, Acknowledged: acks}
	for _, name := range records {
		b, err := readFile(name)
		var rs []explain.DrainRecord
		if err == nil {
			rs, err = explain.ReadDrainRecords(b)
		}
		if err != nil {
			fmt.Fprintf(stderr, "%s explain: --drain-record %s: %v\n", glancekrm.Name, name, err)
			return explainUsage
		}
		opts.DrainRecords = append(opts.DrainRecords, rs...)
	}
	for _, k := range strings.Split(*failOn, ",") {
		if k = strings.TrimSpace(k); k != "" {
			opts.FailOn = append(opts.FailOn, k)
		}
	}
	report := explain.Compare(renders[0], renders[1], opts)
	write := func() error { return report.Write(stdout, *format) }
	if *format == findings.FormatSARIF || *format == findings.FormatGitHub {
		write = func() error { return findings.Write(stdout, *format, tool("explain"), report.Findings(fs.Arg(1))) }
	}
	if err := write(); err != nil {
		fmt.Fprintf(stderr, "%s explain: %v\n", glancekrm.Name, err)
		return explainUsage
	}
	if report.Blocked() {
		return explainBlocked
	}
	return explainOK
}

// readRender reads a render: a file, - for stdin, or a folder: a
// kustomization is built (KUSTOMIZE, else kustomize on PATH, with the
// flags glance-krm needs), any other folder (a rendered kpt package) is
// read file by file.
func readFile(name string) ([]byte, error) {
	if name == "-" {
		return io.ReadAll(os.Stdin)
	}
	return os.ReadFile(name)
}

func readRender(name string) ([]byte, error) {
	if name == "-" {
		return io.ReadAll(os.Stdin)
	}
	info, err := os.Stat(name)
	if err != nil || !info.IsDir() {
		return os.ReadFile(name)
	}
	for _, k := range []string{"kustomization.yaml", "kustomization.yml", "Kustomization"} {
		if _, err := os.Stat(filepath.Join(name, k)); err == nil {
			bin := os.Getenv("KUSTOMIZE")
			if bin == "" {
				bin = "kustomize"
			}
			var stderr bytes.Buffer
			cmd := exec.Command(bin, "build", "--enable-alpha-plugins", "--enable-exec", name)
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				return nil, fmt.Errorf("kustomize build: %w\n%s", err, stderr.String())
			}
			return out, nil
		}
	}
	nodes, err := (&kio.LocalPackageReader{PackagePath: name, OmitReaderAnnotations: true}).Read()
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	err = kio.ByteWriter{Writer: &buf}.Write(nodes)
	return buf.Bytes(), err
}

// tool names the function in SARIF.
func tool(command string) findings.Tool {
	return findings.Tool{Name: glancekrm.Name + " " + command, Version: glancekrm.Version, InformationURI: "https://github.com/c5c3/glance-krm"}
}

// validateFiles gives the function's verdict on kustomizations (as the
// build gives it), files and folders (package validate): exit 1 when an
// error is found, 2 for bad flags, unreadable input or a build that fails
// in kustomize. With --record it is the function in validate's own build.
func validateFiles(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("validate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: %s validate [--format text|sarif|github] PATH...\n\nPATH: a kustomization's folder (built as kustomize build --enable-alpha-plugins --enable-exec builds it, the function running where it is declared),\nYAML files, or other folders (every YAML file below, as written: a kpt package's).\nExit codes: 0 no error, 1 an error found, 2 usage, unreadable input, or a build that fails in kustomize.\n\n", glancekrm.Name)
		fs.PrintDefaults()
	}
	format := fs.String("format", findings.FormatText, "text, sarif (code scanning) or github (workflow annotations)")
	record := fs.String(validate.FlagRecord, "", "internal: run as the function in validate's own kustomize build, recording the results in this folder")
	refuse := fs.String(validate.FlagRefuse, "", "internal: with --"+validate.FlagRecord+", the function declared in the build that validate does not run")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *record != "" {
		return validate.AsFunction(*record, *refuse, os.Stdin, stdout, stderr, filter)
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return 2
	}
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintf(stderr, "%s validate: %v\n", glancekrm.Name, err)
		return 2
	}
	found, ok, err := validate.Run(fs.Args(), validate.Options{Function: self})
	if err != nil {
		fmt.Fprintf(stderr, "%s validate: %v\n", glancekrm.Name, err)
		return 2
	}
	if err := findings.Write(stdout, *format, tool("validate"), found); err != nil {
		fmt.Fprintf(stderr, "%s validate: %v\n", glancekrm.Name, err)
		return 2
	}
	if !ok {
		return 1
	}
	return 0
}

type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

// keepHistory is the pre-render step for Flux (README, "Flux"): a
// kustomize build's output on stdin, the output with the rendered copies
// of --previous carried over on stdout (glancekrm.KeepHistory).
func keepHistory(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
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
	out, err := glancekrm.KeepHistory(prev, cur)
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
