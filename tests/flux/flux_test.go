// Package flux_test proves the Flux flow of README ("Flux") with Flux's
// own build code, github.com/fluxcd/pkg/kustomize, as kustomize-controller
// runs it: its generator, its secure build with plugins disabled, and its
// post-build substitution.
package flux_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
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
	dir := t.TempDir()
	testenv.CopyTree(t, filepath.Join(root, "examples"), dir, func(_ string, b []byte) []byte {
		return []byte(strings.ReplaceAll(string(b), "../../../bin/glance-krm-fn", testenv.FunctionBinary(t)))
	})
	return filepath.Join(dir, "flux", "overlay")
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

// TestPrerenderedOutputBuildsUnderFlux: the pre-rendered folder builds
// with Flux's settings, holds what kustomize with the function rendered,
// and is what examples/flux/rendered holds.
func TestPrerenderedOutputBuildsUnderFlux(t *testing.T) {
	ov := overlay(t)
	out := t.TempDir()
	prerender(t, ov, out)
	for _, f := range []string{"kustomization.yaml", "resources.yaml"} {
		got, _ := os.ReadFile(filepath.Join(out, f))
		want, err := os.ReadFile(filepath.Join(root, "examples", "flux", "rendered", f))
		if err != nil || string(got) != string(want) {
			t.Errorf("examples/flux/rendered/%s is not what a fresh render writes: `rm -rf examples/flux/rendered && make flux-render OVERLAY=examples/flux/overlay OUT=examples/flux/rendered` (into an existing folder it carries the previous copies)", f)
		}
	}
	res, err := fluxBuild(t, out)
	if err != nil {
		t.Fatalf("Flux cannot build the pre-rendered folder: %v", err)
	}
	stdout, stderr, err := testenv.KustomizeBuild(t, ov)
	if err != nil {
		t.Fatalf("kustomize build: %v\n%s", err, stderr)
	}
	var fluxNames, kustomizeNames []string
	for _, r := range res {
		fluxNames = append(fluxNames, r.GetKind()+"/"+r.GetName())
	}
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
		t.Errorf("Flux's build holds %v, kustomize with the function rendered %v", fluxNames, kustomizeNames)
	}
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
	res, err := fluxBuild(t, out)
	if err != nil {
		t.Fatal(err)
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

// TestRolloutKeepsTheMountedConfig: Flux prunes what leaves its output
// right after applying the new set. Rendered again after a change (the
// default store flips), the pre-rendered folder still holds the copies
// the previous Deployment mounts, so Flux's pruning removes none of them
// while the old pods are replaced; rendered three changes later, the
// oldest copy goes.
func TestRolloutKeepsTheMountedConfig(t *testing.T) {
	ov := overlay(t)
	out := t.TempDir()
	prerender(t, ov, out)
	first := inventory(t, out)
	mounted := mountedBy(t, out)
	if len(mounted) != 2 {
		t.Fatalf("the Deployment mounts %v", mounted)
	}

	backends := filepath.Join(ov, "..", "..", "standalone", "resources", "backends.yaml")
	flip := func() {
		b, err := os.ReadFile(backends)
		if err != nil {
			t.Fatal(err)
		}
		s := strings.ReplaceAll(string(b), "isDefault: true", "isDefault: X")
		s = strings.ReplaceAll(s, "isDefault: false", "isDefault: true")
		s = strings.ReplaceAll(s, "isDefault: X", "isDefault: false")
		if err := os.WriteFile(backends, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	flip()
	prerender(t, ov, out)
	second := inventory(t, out)
	for _, name := range mounted {
		if !second[name] {
			t.Errorf("after the change Flux would prune %s, which the previous Deployment mounts", name)
		}
	}
	if newMount := mountedBy(t, out); slices.Equal(newMount, mounted) {
		t.Fatal("the change did not rename the mounted config")
	}
	pruned := 0
	for name := range first {
		if !second[name] {
			pruned++
		}
	}
	if pruned != 0 {
		t.Errorf("%d objects of the first render are gone after one change", pruned)
	}

	// Three more changes (a flip back reuses a copy, so vary the endpoint):
	// the first ConfigMap leaves the history and is pruned by Flux then.
	for _, v := range []string{"a", "b", "c"} {
		edit(t, filepath.Join(ov, "kustomization.yaml"), "${tenant}", "${tenant}-"+v)
		prerender(t, ov, out)
		edit(t, filepath.Join(ov, "kustomization.yaml"), "${tenant}-"+v, "${tenant}")
	}
	last := inventory(t, out)
	gone := 0
	for _, name := range mounted {
		if !last[name] && strings.Contains(name, "-config-") {
			gone++
		}
	}
	if gone != 1 {
		t.Errorf("after four changes the first ConfigMap should have left the history (%d copies at most are kept)", 3)
	}
}

func edit(t *testing.T, file, old, new string) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte(strings.Replace(string(b), old, new, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
}

// inventory is what Flux would apply from the folder: kind/name of each
// object of its build.
func inventory(t *testing.T, dir string) map[string]bool {
	t.Helper()
	res, err := fluxBuild(t, dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, r := range res {
		out[r.GetKind()+"/"+r.GetName()] = true
	}
	return out
}

// mountedBy is the ConfigMap and Secret the folder's Deployment mounts.
func mountedBy(t *testing.T, dir string) []string {
	t.Helper()
	res, err := fluxBuild(t, dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range res {
		if r.GetKind() != "Deployment" {
			continue
		}
		b, _ := r.AsYAML()
		n, err := yaml.Parse(string(b))
		if err != nil {
			t.Fatal(err)
		}
		vols, _ := n.Pipe(yaml.Lookup("spec", "template", "spec", "volumes"))
		_ = vols.VisitElements(func(v *yaml.RNode) error {
			if v.Field("name").Value.YNode().Value != v1alpha1.VolumeConfig {
				return nil
			}
			srcs, _ := v.Pipe(yaml.Lookup("projected", "sources"))
			return srcs.VisitElements(func(s *yaml.RNode) error {
				if cm := s.Field("configMap"); cm != nil {
					out = append(out, "ConfigMap/"+yaml.GetValue(cm.Value.Field("name").Value))
				}
				if sec := s.Field("secret"); sec != nil {
					out = append(out, "Secret/"+yaml.GetValue(sec.Value.Field("name").Value))
				}
				return nil
			})
		})
	}
	slices.Sort(out)
	return out
}

// TestPrerenderIsTheBuild builds one overlay both ways: with kustomize and
// the function, and through hack/flux-prerender.sh. The function runs in a
// base with a functionConfig of its own (a mirrored credentials image);
// the overlay above adds images: and a patch. What Flux gets is the build,
// byte for byte; after a change, the build followed by the previous
// copies, marked as carried; the same build again changes nothing; and
// the copies of a Glance that left the build are not carried. The script
// finds the function where the base declares it (no GLANCE_KRM_FN).
func TestPrerenderIsTheBuild(t *testing.T) {
	dir := t.TempDir()
	testenv.CopyTree(t, filepath.Join(root, "examples", "standalone", "resources"), filepath.Join(dir, "resources"), nil)
	write := func(path, content string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, path)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, path), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("base/kustomization.yaml", "resources: [../resources]\ntransformers: [glance-krm.yaml]\n")
	write("base/glance-krm.yaml", "apiVersion: fn.glance.openstack.c5c3.io/v1alpha1\nkind: RenderGlanceConfig\nmetadata:\n  name: glance-krm\n  annotations:\n    config.kubernetes.io/function: |\n      exec:\n        path: "+testenv.FunctionBinary(t)+"\nspec:\n  credentialsImage: mirror.example/c5c3/glance-krm-fn:v0.1.0\n")
	top := "resources: [../base]\nimages:\n  - {name: ghcr.io/c5c3/glance, newName: mirror.example/c5c3/glance}\npatches:\n  - target: {kind: Deployment, name: glance}\n    patch: |\n      - {op: add, path: /metadata/labels/team, value: images}\n"
	write("top/kustomization.yaml", top)
	out := filepath.Join(dir, "out")
	run := func() (string, string) {
		t.Helper()
		build, stderr, err := testenv.KustomizeBuild(t, filepath.Join(dir, "top"))
		if err != nil {
			t.Fatalf("kustomize build: %v\n%s", err, stderr)
		}
		cmd := exec.Command("bash", filepath.Join(root, "hack", "flux-prerender.sh"), filepath.Join(dir, "top"), out)
		cmd.Env = append(slices.DeleteFunc(os.Environ(), func(e string) bool { return strings.HasPrefix(e, "GLANCE_KRM_FN=") }), "KUSTOMIZE="+testenv.Kustomize(t))
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("flux-prerender.sh: %v\n%s", err, b)
		}
		got, err := os.ReadFile(filepath.Join(out, "resources.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		return build, string(got)
	}
	build, got := run()
	if got != build {
		t.Fatalf("the first pre-render is not the build:\n--- build\n%s\n--- pre-render\n%s", build, got)
	}
	for _, want := range []string{"image: mirror.example/c5c3/glance:2025.2", "image: mirror.example/c5c3/glance-krm-fn:v0.1.0", "team: images"} {
		if !strings.Contains(got, want) {
			t.Errorf("the build lacks %q", want)
		}
	}

	// A change: the default store flips, the config ConfigMap is renamed.
	edit := func(file, from, to string) {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil || !strings.Contains(string(b), from) {
			t.Fatalf("%s lacks %q", file, from)
		}
		if err := os.WriteFile(filepath.Join(dir, file), []byte(strings.Replace(string(b), from, to, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	edit("resources/backends.yaml", "isDefault: true", "isDefault: X")
	edit("resources/backends.yaml", "isDefault: false", "isDefault: true")
	edit("resources/backends.yaml", "isDefault: X", "isDefault: false")
	build2, got2 := run()
	if !strings.HasPrefix(got2, build2) {
		t.Fatalf("the pre-render does not start with the build")
	}
	carried := strings.TrimPrefix(got2, build2)
	if !strings.Contains(carried, v1alpha1.AnnotationCarried+`: "1"`) || strings.Count(carried, "kind: ConfigMap") != 1 || strings.Contains(carried, "kind: Secret") {
		t.Errorf("want the old ConfigMap carried (and the Secret, unchanged, not twice):\n%s", carried)
	}
	if _, again := run(); again != got2 {
		t.Errorf("the same build pre-rendered again changed the output")
	}

	// The Glance leaves the build (moved to another namespace): nothing of
	// it is carried.
	write("top/kustomization.yaml", top+"namespace: elsewhere\n")
	build3, got3 := run()
	if got3 != build3 {
		t.Errorf("copies of a Glance that left the build are carried:\n%s", strings.TrimPrefix(got3, build3))
	}
}
