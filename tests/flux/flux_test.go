// Package flux_test proves the Flux flow of README ("Flux") with Flux's
// own build code, github.com/fluxcd/pkg/kustomize, as kustomize-controller
// runs it: its generator, its secure build with plugins disabled, and its
// post-build substitution.
package flux_test

import (
	"context"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	fluxkustomize "github.com/fluxcd/pkg/kustomize"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/api/resource"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/c5c3/glance-krm/internal/testenv"
	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

var root = testenv.RepoRoot()

// steps are the folders hack/flux-prerender.sh writes, in the order the
// three Flux Kustomizations of examples/flux/flux.yaml apply them.
var steps = []string{"0-prepare", "1-workload", "2-after"}

// prerender runs hack/flux-prerender.sh, the documented step, on an
// overlay into out.
func prerender(t *testing.T, overlay, out string) {
	t.Helper()
	cmd := exec.Command("bash", filepath.Join(root, "hack", "flux-prerender.sh"), overlay, out)
	cmd.Env = append(os.Environ(), "KUSTOMIZE="+testenv.Kustomize(t), "GLANCE_KRM_FN="+testenv.FunctionBinary(t))
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("flux-prerender.sh: %v\n%s", err, b)
	}
}

// overlay copies examples/flux/overlay with the standalone resources it
// includes, the function pointed at the built binary.
func overlay(t *testing.T) string {
	t.Helper()
	return example(t, "flux/overlay")
}

// example copies examples/ and returns the folder of one of them, every
// function pointed at the built binary.
func example(t *testing.T, name string) string {
	t.Helper()
	dir := t.TempDir()
	bin := regexp.MustCompile(`(\.\./)+bin/glance-krm-fn`)
	testenv.CopyTree(t, filepath.Join(root, "examples"), dir, func(_ string, b []byte) []byte {
		return bin.ReplaceAll(b, []byte(testenv.FunctionBinary(t)))
	})
	return filepath.Join(dir, name)
}

// fluxKustomization is a Flux Kustomization as kustomize-controller reads
// it: path, prune, and an inline postBuild substitution of the variable
// the example's rendered value holds.
func fluxKustomization() unstructured.Unstructured {
	return unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kustomize.toolkit.fluxcd.io/v1",
		"kind":       "Kustomization",
		"metadata":   map[string]any{"name": "glance", "namespace": "flux-system"},
		"spec": map[string]any{
			"path": "./", "prune": true,
			"postBuild": map[string]any{"substitute": map[string]any{"tenant": "substituted-by-flux"}},
		},
	}}
}

// fluxBuild builds a folder as kustomize-controller does: its generator
// (which writes a kustomization.yaml when there is none and applies the
// Kustomization's overrides), then its secure build, plugins disabled.
// The artifact's root is the folder's parent: an overlay may include
// resources beside it, as a git source's would.
func fluxBuild(t *testing.T, dir string) ([]*resource.Resource, error) {
	t.Helper()
	if _, err := fluxkustomize.NewGenerator(dir, fluxKustomization()).WriteFile(dir); err != nil {
		t.Fatalf("flux generator: %v", err)
	}
	m, err := fluxkustomize.SecureBuild(filepath.Dir(filepath.Dir(dir)), dir, false)
	if err != nil {
		return nil, err
	}
	return m.Resources(), nil
}

func TestFluxCannotRunTheFunction(t *testing.T) {
	testenv.External(t, "kustomize and the function")
	_, err := fluxBuild(t, overlay(t))
	if err == nil || !strings.Contains(err.Error(), "external plugins disabled") {
		t.Fatalf("Flux built the overlay with the transformer (%v): the pre-render step is no longer needed, update README", err)
	}
}

// TestPrerenderedOutputBuildsUnderFlux: each pre-rendered folder builds
// with Flux's settings, together they hold what kustomize with the
// function rendered, each object once, and they are what
// examples/flux/rendered holds (and nothing else).
func TestPrerenderedOutputBuildsUnderFlux(t *testing.T) {
	ov := overlay(t)
	out := t.TempDir()
	prerender(t, ov, out)
	for _, step := range steps {
		for _, f := range []string{"kustomization.yaml", "resources.yaml"} {
			got, _ := os.ReadFile(filepath.Join(out, step, f))
			want, err := os.ReadFile(filepath.Join(root, "examples", "flux", "rendered", step, f))
			if err != nil || string(got) != string(want) {
				t.Errorf("examples/flux/rendered/%s/%s is not what a fresh render writes: `rm -rf examples/flux/rendered && make flux-render OVERLAY=examples/flux/overlay OUT=examples/flux/rendered` (into an existing folder it carries the previous copies)", step, f)
			}
		}
	}
	var files []string
	_ = filepath.WalkDir(filepath.Join(root, "examples", "flux", "rendered"), func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(filepath.Join(root, "examples", "flux", "rendered"), path)
			files = append(files, rel)
		}
		return err
	})
	if want := []string{"0-prepare/kustomization.yaml", "0-prepare/resources.yaml", "1-workload/kustomization.yaml", "1-workload/resources.yaml",
		"2-after/kustomization.yaml", "2-after/resources.yaml"}; !slices.Equal(files, want) {
		t.Errorf("examples/flux/rendered holds %v, want %v", files, want)
	}
	var fluxNames []string
	for _, step := range steps {
		res, err := fluxBuild(t, filepath.Join(out, step))
		if err != nil {
			t.Fatalf("Flux cannot build the pre-rendered folder %s: %v", step, err)
		}
		for _, r := range res {
			fluxNames = append(fluxNames, r.GetKind()+"/"+r.GetName())
		}
	}
	stdout, stderr, err := testenv.KustomizeBuild(t, ov)
	if err != nil {
		t.Fatalf("kustomize build: %v\n%s", err, stderr)
	}
	var kustomizeNames []string
	nodes, err := (&kio.ByteReader{Reader: strings.NewReader(stdout)}).Read()
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		kustomizeNames = append(kustomizeNames, n.GetKind()+"/"+n.GetName())
	}
	slices.Sort(fluxNames)
	slices.Sort(kustomizeNames)
	if !slices.Equal(fluxNames, kustomizeNames) {
		t.Errorf("Flux's builds of the folders hold %v, kustomize with the function rendered %v", fluxNames, kustomizeNames)
	}
}

// TestStepsSplitTheRender pre-renders the example with every generated
// kind (db-sync, db-contract, a db-purge CronJob, HPA, PDB, HTTPRoute,
// NetworkPolicies) with the real kustomize and function: the folders
// together are the single build, each object once and byte for byte;
// each folder holds exactly the kinds of its step, which the Flux
// Kustomizations apply one after the other (an HPA before the
// Deployment would be Degraded, db-contract before the rollout would drop
// what the old pods read); and each Flux build of a folder holds its
// objects. A second render of the same build changes nothing.
func TestStepsSplitTheRender(t *testing.T) {
	testenv.External(t, "kustomize and the function")
	ov := example(t, "generated")
	out := t.TempDir()
	prerender(t, ov, out)
	// Before Flux's generator rewrites the kustomization.yaml files.
	before := readSteps(t, out)
	build, stderr, err := testenv.KustomizeBuild(t, ov)
	if err != nil {
		t.Fatalf("kustomize build: %v\n%s", err, stderr)
	}
	want := map[string]int{}
	for _, d := range objects(t, build) {
		want[d]++
	}
	stepOf := map[string]int{
		"ConfigMap": 0, "Secret": 0, "Service": 0, "NetworkPolicy": 0, "Job/db-sync": 0,
		"Deployment":      1,
		"Job/db-contract": 2, "HorizontalPodAutoscaler": 2, "PodDisruptionBudget": 2, "HTTPRoute": 2, "CronJob": 2,
		v1alpha1.GlanceKind: 2, v1alpha1.GlanceBackendKind: 2,
	}
	seen := map[string]bool{}
	got := map[string]int{}
	for i, step := range steps {
		raw, err := os.ReadFile(filepath.Join(out, step, "resources.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		docs := objects(t, string(raw))
		for _, d := range docs {
			got[d]++
			n, err := yaml.Parse(d)
			if err != nil {
				t.Fatal(err)
			}
			k := n.GetKind()
			if k == "Job" {
				k += "/" + n.GetLabels()["app.kubernetes.io/component"]
			}
			seen[k] = true
			if s, ok := stepOf[k]; !ok || s != i {
				t.Errorf("%s %s is in %s, want %s", k, n.GetName(), step, map[bool]string{true: steps[s], false: "a step this test knows"}[ok])
			}
		}
		res, err := fluxBuild(t, filepath.Join(out, step))
		if err != nil {
			t.Fatalf("Flux cannot build %s: %v", step, err)
		}
		if len(res) != len(docs) {
			t.Errorf("Flux's build of %s holds %d objects, the folder %d", step, len(res), len(docs))
		}
	}
	for k := range stepOf {
		if !seen[k] {
			t.Errorf("the render holds no %s: the example no longer exercises every step", k)
		}
	}
	if !maps.Equal(got, want) {
		t.Errorf("the folders together are not the build: %d objects in the folders, %d in the build", len(got), len(want))
		for d, n := range want {
			if got[d] != n {
				t.Errorf("%d times in the build, %d in the folders:\n%s", n, got[d], d)
			}
		}
		for d, n := range got {
			if _, ok := want[d]; !ok {
				t.Errorf("%d times in the folders, not in the build:\n%s", n, d)
			}
		}
	}
	prerender(t, ov, out)
	if after := readSteps(t, out); !maps.Equal(before, after) {
		t.Error("the same build pre-rendered again changed the folders")
	}
}

// objects are the documents of a YAML stream, each as its own text
// (trailing blank lines and document markers off).
func objects(t *testing.T, stream string) []string {
	t.Helper()
	var out []string
	for _, d := range regexp.MustCompile(`(?m)^---[ \t]*\n`).Split(stream, -1) {
		if strings.TrimSpace(d) == "" {
			continue
		}
		out = append(out, strings.TrimRight(d, "\n")+"\n")
	}
	return out
}

func readSteps(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, step := range steps {
		for _, f := range []string{"kustomization.yaml", "resources.yaml"} {
			b, err := os.ReadFile(filepath.Join(dir, step, f))
			if err != nil {
				t.Fatal(err)
			}
			out[step+"/"+f] = string(b)
		}
	}
	return out
}

// TestSubstitutionLeavesRenderedObjectsAlone runs Flux's post-build
// substitution on every object of the pre-rendered folder: each object the
// function generated comes out byte-identical, though the rendered
// glance-api.conf holds "${tenant}"; the Glance CR, which does not opt
// out, is substituted (the substitution is live); and without the
// annotation the rendered ConfigMap would have been rewritten.
func TestSubstitutionLeavesRenderedObjectsAlone(t *testing.T) {
	out := t.TempDir()
	prerender(t, overlay(t), out)
	var res []*resource.Resource
	for _, step := range steps {
		r, err := fluxBuild(t, filepath.Join(out, step))
		if err != nil {
			t.Fatal(err)
		}
		res = append(res, r...)
	}
	ctx := context.Background()
	generated, substituted := 0, 0
	for _, r := range res {
		before, err := r.AsYAML()
		if err != nil {
			t.Fatal(err)
		}
		after, err := fluxkustomize.SubstituteVariables(ctx, nil, fluxKustomization(), r.DeepCopy(), fluxkustomize.SubstituteWithDryRun(true))
		if err != nil {
			t.Fatalf("%s/%s: %v", r.GetKind(), r.GetName(), err)
		}
		changed := false
		if after != nil {
			b, _ := after.AsYAML()
			changed = string(b) != string(before)
		}
		if r.GetLabels()[v1alpha1.LabelManagedBy] == v1alpha1.ManagedByGlanceKRM {
			generated++
			if changed {
				t.Errorf("Flux's substitution changed %s/%s, which glance-krm generated", r.GetKind(), r.GetName())
			}
		}
		if changed {
			substituted++
		}
		if r.GetKind() == "ConfigMap" && strings.Contains(string(before), "${tenant}") {
			// The same object without the opt-out: substitution rewrites it.
			bare := r.DeepCopy()
			a := bare.GetAnnotations()
			delete(a, v1alpha1.AnnotationFluxSubstitute)
			_ = bare.SetAnnotations(a)
			got, err := fluxkustomize.SubstituteVariables(ctx, nil, fluxKustomization(), bare, fluxkustomize.SubstituteWithDryRun(true))
			if err != nil || got == nil {
				t.Fatalf("substituting the bare ConfigMap: %v", err)
			}
			if b, _ := got.AsYAML(); !strings.Contains(string(b), "substituted-by-flux") {
				t.Errorf("without %s the rendered ConfigMap is not rewritten: this test no longer shows why the annotation is there", v1alpha1.AnnotationFluxSubstitute)
			}
		}
	}
	if generated < 2 {
		t.Errorf("only %d generated objects in the Flux build", generated)
	}
	if substituted == 0 {
		t.Error("Flux's substitution changed nothing: the example no longer exercises it")
	}
}

// TestExampleChainsTheSteps: examples/flux/flux.yaml applies the folders
// hack/flux-prerender.sh writes, each by its own Kustomization of one
// source, in order: each after the one before is ready (dependsOn), and
// each ready only once what it applied is (wait), so the db-sync Job
// completes before the Deployments roll and they finish before
// db-contract runs; the last one judges the Glance by healthCheckExprs.
func TestExampleChainsTheSteps(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(root, "examples", "flux", "flux.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	nodes, err := (&kio.ByteReader{Reader: strings.NewReader(string(raw))}).Read()
	if err != nil {
		t.Fatal(err)
	}
	var ks []*yaml.RNode
	for _, n := range nodes {
		if n.GetKind() == "Kustomization" && n.GetApiVersion() == "kustomize.toolkit.fluxcd.io/v1" {
			ks = append(ks, n)
		}
	}
	if len(ks) != len(steps) {
		t.Fatalf("%d Flux Kustomizations, want one per step (%v)", len(ks), steps)
	}
	get := func(n *yaml.RNode, path ...string) string {
		v, err := n.Pipe(yaml.Lookup(path...))
		if err != nil || v == nil {
			return ""
		}
		return strings.TrimSpace(v.MustString())
	}
	for i, k := range ks {
		name := k.GetName()
		if p := get(k, "spec", "path"); p != "./"+steps[i] {
			t.Errorf("Kustomization %s applies %q, want ./%s", name, p, steps[i])
		}
		if get(k, "spec", "wait") != "true" || get(k, "spec", "prune") != "true" {
			t.Errorf("Kustomization %s: wait %q, prune %q; want both true", name, get(k, "spec", "wait"), get(k, "spec", "prune"))
		}
		if get(k, "spec", "sourceRef", "name") != get(ks[0], "spec", "sourceRef", "name") {
			t.Errorf("Kustomization %s reads another source than %s", name, ks[0].GetName())
		}
		deps := get(k, "spec", "dependsOn")
		switch {
		case i == 0 && deps != "":
			t.Errorf("the first step depends on %s", deps)
		case i > 0 && deps != "- name: "+ks[i-1].GetName():
			t.Errorf("Kustomization %s depends on %q, want the step before, %s", name, deps, ks[i-1].GetName())
		}
	}
	exprs := get(ks[len(ks)-1], "spec", "healthCheckExprs")
	for _, kind := range []string{"kind: " + v1alpha1.GlanceKind + "\n", "kind: " + v1alpha1.GlanceBackendKind + "\n"} {
		if !strings.Contains(exprs+"\n", kind) {
			t.Errorf("the last step has no healthCheckExprs for %s", strings.TrimSpace(kind))
		}
	}
}
