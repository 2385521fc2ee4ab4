package explain

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/kio"

	"github.com/c5c3/glance-krm/fn/findings"
)

// Exit codes of explain, for CI to gate on.
const (
	explainOK      = 0 // nothing blocks
	explainBlocked = 1 // a blocking warning is not acknowledged
	explainUsage   = 2 // bad flags or a render that cannot be read
)

// Command prints what the change from one render to another does
// (package explain).
func Command(args []string, stdin io.Reader, stdout, stderr io.Writer, tool findings.Tool) int {
	fs := flag.NewFlagSet("explain", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: %s [flags] BEFORE AFTER\n\nBEFORE and AFTER are two renders: files (kustomize build output or a ResourceList; - for stdin),\nor folders (a kustomization, built with $KUSTOMIZE or kustomize; a rendered kpt package, read as it is).\nExit codes: 0 nothing blocks, 1 a blocking warning is not acknowledged, 2 usage or unreadable input.\n\n", tool.Name)
		fs.PrintDefaults()
	}
	format := fs.String("format", FormatText, "text, markdown, json, sarif (code scanning) or github (workflow annotations)")
	failOn := fs.String("fail-on", StoreRemoved, "comma-separated warning kinds that block (exit 1): "+strings.Join(Kinds, ", ")+"; empty for none ("+GlanceRemoved+" and "+StoreRenamed+" block whenever "+StoreRemoved+" does, "+ReleaseDowngrade+" always)")
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
	var renders [2]*Render
	for i, name := range fs.Args() {
		b, err := readRender(name, stdin)
		if err == nil {
			renders[i], err = Read(b)
		}
		if err != nil {
			fmt.Fprintf(stderr, "%s: %s: %v\n", tool.Name, name, err)
			return explainUsage
		}
	}
	opts := Options{FailOn: []string{}, Acknowledged: acks}
	for _, name := range records {
		b, err := readFile(name, stdin)
		var rs []DrainRecord
		if err == nil {
			rs, err = ReadDrainRecords(b)
		}
		if err != nil {
			fmt.Fprintf(stderr, "%s: --drain-record %s: %v\n", tool.Name, name, err)
			return explainUsage
		}
		opts.DrainRecords = append(opts.DrainRecords, rs...)
	}
	for _, k := range strings.Split(*failOn, ",") {
		if k = strings.TrimSpace(k); k != "" {
			opts.FailOn = append(opts.FailOn, k)
		}
	}
	report := Compare(renders[0], renders[1], opts)
	write := func() error { return report.Write(stdout, *format) }
	if *format == findings.FormatSARIF || *format == findings.FormatGitHub {
		write = func() error { return findings.Write(stdout, *format, tool, report.Findings(fs.Arg(1))) }
	}
	if err := write(); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", tool.Name, err)
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
func readFile(name string, stdin io.Reader) ([]byte, error) {
	if name == "-" {
		return io.ReadAll(stdin)
	}
	return os.ReadFile(name)
}

func readRender(name string, stdin io.Reader) ([]byte, error) {
	if name == "-" {
		return io.ReadAll(stdin)
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

type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }
