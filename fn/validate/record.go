package validate

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/api/resource"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/c5c3/glance-krm/fn/findings"
	"github.com/c5c3/glance-krm/fn/glancekrm"
	"github.com/c5c3/glance-krm/fn/glancekrm/controlplane"
)

// Flags of `glance-krm-fn validate` that only validate's own build gives
// the function it runs in the place of every function a kustomization
// declares (view): the run is the function's, and it leaves a record of
// what it found for validate to map to files and lines.
const (
	FlagRecord = "record" // the folder the run writes its record into
	FlagRefuse = "refuse" // a function validate does not run, as the build names it
)

// Annotations kustomize puts on the items it passes a function: where
// an object came from (buildMetadata: [originAnnotations], which validate
// adds to the kustomization it builds) and its names before kustomize's
// transformers changed them, oldest first.
const (
	annotationOrigin        = "config.kubernetes.io/origin"
	annotationPreviousNames = "internal.config.kubernetes.io/previousNames"
	annotationPreviousNS    = "internal.config.kubernetes.io/previousNamespaces"
)

// A run is what one run of the function in validate's build recorded.
type run struct {
	// Dir is the run's working directory: kustomize runs a function in the
	// folder of the kustomization that declares it.
	Dir string `json:"dir"`
	// Refused is set instead of everything else when the build declares a
	// function validate does not run.
	Refused string `json:"refused,omitempty"`
	// Config is where the functionConfig came from, and which it is.
	Config     *resource.Origin `json:"config,omitempty"`
	ConfigKind string           `json:"configKind,omitempty"`
	ConfigName string           `json:"configName,omitempty"`
	Failed     bool             `json:"failed"`
	Results    []recorded       `json:"results"`
}

// recorded is one result, with the object it is about as the function
// saw it.
type recorded struct {
	Level   string  `json:"level"`
	Rule    string  `json:"rule"`
	Message string  `json:"message"`
	Object  string  `json:"object,omitempty"`
	Field   string  `json:"field,omitempty"`
	Target  *target `json:"target,omitempty"`
}

// target is the object a result is about, in the function's input.
type target struct {
	APIVersion string           `json:"apiVersion"`
	Kind       string           `json:"kind"`
	Names      []string         `json:"names"`      // the original first, the current last
	Namespaces []string         `json:"namespaces"` // likewise
	Origin     *resource.Origin `json:"origin,omitempty"`
	// Field is where in it the result is, "" for the object.
	Field string `json:"field,omitempty"`
	// Sum is a digest of the value at Field, "" when the object has no
	// such field. A digest, not the value: a field may hold a credential,
	// and the record is a file.
	Sum string `json:"sum,omitempty"`
}

// AsFunction is `glance-krm-fn validate --record DIR`: function (the
// binary's own filter) run on stdin as kustomize runs it, its output and
// exit code unchanged, its results recorded in dir. With refuse it runs
// nothing, records the refusal and fails the build.
func AsFunction(dir, refuse string, stdin io.Reader, stdout, stderr io.Writer, function func(io.Reader, io.Writer, io.Writer) int) int {
	wd, _ := os.Getwd()
	rec := run{Dir: wd}
	if refuse != "" {
		rec.Refused = refuse
		// validate reports the refusal; the build only has to stop here.
		if err := rec.write(dir); err != nil {
			fmt.Fprintf(stderr, "%s validate: not running %s: %v\n", glancekrm.Name, refuse, err)
		}
		return 1
	}
	in, err := io.ReadAll(stdin)
	if err != nil {
		fmt.Fprintf(stderr, "%s: reading stdin: %v\n", glancekrm.Name, err)
		return 1
	}
	var out bytes.Buffer
	// The function's own lines on stderr would only repeat the findings
	// validate prints.
	code := function(bytes.NewReader(in), &out, io.Discard)
	rec.Failed = code != 0
	rec.fill(in, out.Bytes())
	if err := rec.write(dir); err != nil {
		fmt.Fprintf(stderr, "%s validate: %v\n", glancekrm.Name, err)
		return 1
	}
	if _, err := stdout.Write(out.Bytes()); err != nil {
		fmt.Fprintf(stderr, "%s: writing stdout: %v\n", glancekrm.Name, err)
		return 1
	}
	return code
}

// fill records the results of the output, each with its object from the
// input.
func (rec *run) fill(in, out []byte) {
	output, err := fn.ParseResourceList(out)
	if err != nil {
		return
	}
	input, err := fn.ParseResourceList(in)
	if err != nil {
		input = &fn.ResourceList{} // the output says why
	}
	if input.FunctionConfig != nil {
		rec.Config = origin(input.FunctionConfig)
		rec.ConfigKind, rec.ConfigName = input.FunctionConfig.GetKind(), input.FunctionConfig.GetName()
	}
	for _, r := range output.Results {
		f := findings.FromResult(r)
		res := recorded{Level: f.Level, Rule: f.Rule, Message: f.Message}
		if r.Field != nil {
			res.Field = r.Field.Path
		}
		if ref := r.ResourceRef; ref != nil {
			res.Object = strings.TrimSpace(ref.Kind + " " + joinNS(ref.Namespace, ref.Name))
			res.Target = about(ref, res.Field, input.Items, output.Items)
		}
		rec.Results = append(rec.Results, res)
	}
}

// about is the object a result is about, in the run's input: the object
// itself, or, for a child the run projected from a ControlPlane, the
// ControlPlane (the field is the child's, so it locates nothing there).
func about(ref *fn.ResourceRef, field string, input, output fn.KubeObjects) *target {
	is := func(o *fn.KubeObject) bool {
		return o.GetKind() == ref.Kind && o.GetName() == ref.Name && o.GetNamespace() == ref.Namespace && (ref.APIVersion == "" || o.GetAPIVersion() == ref.APIVersion)
	}
	found := slices.IndexFunc(input, is)
	child := output
	if found >= 0 {
		child = input[found : found+1]
	}
	if i := slices.IndexFunc(child, is); i >= 0 {
		if cp := slices.IndexFunc(input, func(o *fn.KubeObject) bool { return controlplane.ProjectedFrom(child[i], o) }); cp >= 0 {
			return targetOf(input[cp], "")
		}
	}
	if found < 0 {
		return nil
	}
	return targetOf(input[found], field)
}

func targetOf(o *fn.KubeObject, field string) *target {
	t := &target{APIVersion: o.GetAPIVersion(), Kind: o.GetKind(), Origin: origin(o), Field: field}
	t.Names = history(o.GetAnnotation(annotationPreviousNames), o.GetName())
	t.Namespaces = history(o.GetAnnotation(annotationPreviousNS), o.GetNamespace())
	if field != "" {
		parts := fieldParts(field)
		if n, depth, _ := descend(o.CopyToResourceNode(), parts); depth == len(parts) {
			t.Sum = sum(n)
		}
	}
	return t
}

// history is a name's previous values (kustomize's comma-separated list)
// and the current one.
func history(previous, current string) []string {
	var out []string
	if previous != "" {
		out = strings.Split(previous, ",")
	}
	if len(out) == 0 || out[len(out)-1] != current {
		out = append(out, current)
	}
	return out
}

func origin(o *fn.KubeObject) *resource.Origin {
	a := o.GetAnnotation(annotationOrigin)
	if a == "" {
		return nil
	}
	var or resource.Origin
	if err := yaml.Unmarshal([]byte(a), &or); err != nil {
		return nil
	}
	return &or
}

// sum is a digest of a YAML value, equal for equal values however they
// are written.
func sum(n *yaml.RNode) string {
	var v any
	if err := n.YNode().Decode(&v); err != nil {
		return ""
	}
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// write adds the record to dir, numbered: kustomize runs one function
// at a time, in the order the build reaches them.
func (rec *run) write(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, fmt.Sprintf("%05d.json", len(entries))), b, 0o600)
}

// readRuns reads the records of a build, in the order of its runs.
func readRuns(dir string) ([]run, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var runs []run
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		var r run
		if err := json.Unmarshal(b, &r); err != nil {
			return nil, fmt.Errorf("the record of a run %s: %w", e.Name(), err)
		}
		runs = append(runs, r)
	}
	return runs, nil
}
