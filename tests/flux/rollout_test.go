package flux_test

import (
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/c5c3/glance-krm/internal/testenv"
	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

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

// inventory is what Flux's three Kustomizations would apply from the
// folders: kind/name of each object of their builds.
func inventory(t *testing.T, dir string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for _, step := range steps {
		res, err := fluxBuild(t, filepath.Join(dir, step))
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res {
			out[r.GetKind()+"/"+r.GetName()] = true
		}
	}
	return out
}

// mountedBy is the ConfigMap and Secret the Deployment of the workload
// step mounts.
func mountedBy(t *testing.T, dir string) []string {
	t.Helper()
	res, err := fluxBuild(t, filepath.Join(dir, "1-workload"))
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
// the overlay above adds images: and a patch. What Flux gets, over the
// three folders, is the build, each object byte for byte; after a change,
// the build and the previous copies, marked as carried, in the first
// folder; the same build again changes nothing; and the copies of a
// Glance that left the build are not carried. The script finds the
// function where the base declares it (no GLANCE_KRM_FN).
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
	// run returns the build's objects and the folders' (what is in the
	// folders and not in the build: carried, by folder).
	run := func() (build []string, folders map[string]string, carried map[string][]string) {
		t.Helper()
		b, stderr, err := testenv.KustomizeBuild(t, filepath.Join(dir, "top"))
		if err != nil {
			t.Fatalf("kustomize build: %v\n%s", err, stderr)
		}
		cmd := exec.Command("bash", filepath.Join(root, "hack", "flux-prerender.sh"), filepath.Join(dir, "top"), out)
		cmd.Env = append(slices.DeleteFunc(os.Environ(), func(e string) bool { return strings.HasPrefix(e, "GLANCE_KRM_FN=") }), "KUSTOMIZE="+testenv.Kustomize(t))
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("flux-prerender.sh: %v\n%s", err, b)
		}
		build = objects(t, b)
		folders = readSteps(t, out)
		carried = map[string][]string{}
		var all []string
		for _, step := range steps {
			for _, d := range objects(t, folders[step+"/resources.yaml"]) {
				all = append(all, d)
				if !slices.Contains(build, d) {
					carried[step] = append(carried[step], d)
				}
			}
		}
		for _, d := range build {
			if n := count(all, d); n != 1 {
				t.Errorf("an object of the build is %d times in the folders:\n%s", n, d)
			}
		}
		return build, folders, carried
	}
	build, folders, carried := run()
	if len(carried) != 0 {
		t.Fatalf("the first pre-render holds objects the build does not: %v", carried)
	}
	joined := strings.Join(build, "---\n")
	for _, want := range []string{"image: mirror.example/c5c3/glance:2025.2", "image: mirror.example/c5c3/glance-krm-fn:v0.1.0", "team: images"} {
		if !strings.Contains(joined, want) {
			t.Errorf("the build lacks %q", want)
		}
	}
	if !strings.Contains(folders["1-workload/resources.yaml"], "team: images") {
		t.Error("the patched Deployment is not in 1-workload")
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
	_, folders2, carried2 := run()
	c := strings.Join(carried2["0-prepare"], "---\n")
	if len(carried2) != 1 || !strings.Contains(c, v1alpha1.AnnotationCarried+`: "1"`) || strings.Count(c, "kind: ConfigMap") != 1 || strings.Contains(c, "kind: Secret") {
		t.Errorf("want the old ConfigMap carried into 0-prepare (and the Secret, unchanged, not twice): %v", carried2)
	}
	if _, again, _ := run(); !maps.Equal(again, folders2) {
		t.Errorf("the same build pre-rendered again changed the output")
	}

	// The Glance leaves the build (moved to another namespace): nothing of
	// it is carried.
	write("top/kustomization.yaml", top+"namespace: elsewhere\n")
	if _, _, carried3 := run(); len(carried3) != 0 {
		t.Errorf("copies of a Glance that left the build are carried: %v", carried3)
	}
}

func count(list []string, s string) int {
	n := 0
	for _, x := range list {
		if x == s {
			n++
		}
	}
	return n
}
