package examples_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// containerImages are the images of every container and init container of
// the objects glance-krm generated, by object.
func containerImages(t *testing.T, out []*yaml.RNode) map[string][]string {
	t.Helper()
	got := map[string][]string{}
	for _, n := range out {
		if n.GetLabels()["app.kubernetes.io/managed-by"] != "glance-krm" {
			continue
		}
		_ = n.PipeE(yaml.FilterFunc(func(obj *yaml.RNode) (*yaml.RNode, error) {
			var walk func(*yaml.RNode)
			walk = func(m *yaml.RNode) {
				switch m.YNode().Kind {
				case yaml.MappingNode:
					_ = m.VisitFields(func(f *yaml.MapNode) error {
						if k := f.Key.YNode().Value; (k == "containers" || k == "initContainers") && f.Value.YNode().Kind == yaml.SequenceNode {
							els, _ := f.Value.Elements()
							for _, c := range els {
								got[n.GetKind()+"/"+n.GetName()] = append(got[n.GetKind()+"/"+n.GetName()], yaml.GetValue(c.Field("image").Value))
							}
							return nil
						}
						walk(f.Value)
						return nil
					})
				case yaml.SequenceNode:
					els, _ := m.Elements()
					for _, e := range els {
						walk(e)
					}
				}
			}
			walk(obj)
			return obj, nil
		}))
	}
	return got
}

// TestImagesOfTheKustomizationThatRunsGlanceKRM: kustomize applies a
// kustomization's images: before its transformers, so it never sees the
// workload glance-krm generates; the function follows them itself, for
// every container it writes, or fails the build naming the conflict.
func TestImagesOfTheKustomizationThatRunsGlanceKRM(t *testing.T) {
	digest := "sha256:" + strings.Repeat("c", 64)
	for name, c := range map[string]struct {
		images string
		want   map[string]string // image name -> the image every such container runs
		fail   string
	}{
		"none": {want: map[string]string{"glance": "ghcr.io/c5c3/glance:2025.2", "fn": "ghcr.io/c5c3/glance-krm-fn:v0.1.0"}},
		"a mirror of both": {images: "- {name: ghcr.io/c5c3/glance, newName: mirror.local/glance}\n- {name: ghcr.io/c5c3/glance-krm-fn, newName: mirror.local/glance-krm-fn}\n",
			want: map[string]string{"glance": "mirror.local/glance:2025.2", "fn": "mirror.local/glance-krm-fn:v0.1.0"}},
		"a digest pin": {images: "- {name: ghcr.io/c5c3/glance, digest: " + digest + "}\n",
			want: map[string]string{"glance": "ghcr.io/c5c3/glance@" + digest, "fn": "ghcr.io/c5c3/glance-krm-fn:v0.1.0"}},
		"a build of the same release": {images: "- {name: ghcr.io/c5c3/glance, newTag: 2025.2-20261203}\n",
			want: map[string]string{"glance": "ghcr.io/c5c3/glance:2025.2-20261203", "fn": "ghcr.io/c5c3/glance-krm-fn:v0.1.0"}},
		"a tag of another release": {images: "- {name: ghcr.io/c5c3/glance, newTag: \"2026.1\"}\n",
			fail: "ImageReleaseMismatch: the images: of "},
	} {
		t.Run(name, func(t *testing.T) {
			dir := copyExample(t, "generated")
			if c.images != "" {
				k := filepath.Join(dir, "kustomization.yaml")
				b, err := os.ReadFile(k)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(k, append(b, "images:\n"+c.images...), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			out := buildVerdict(t, dir, c.fail, nil)
			if out == nil {
				return
			}
			images := containerImages(t, out)
			if len(images) < 3 {
				t.Fatalf("only %d generated objects with containers: %v", len(images), images)
			}
			for obj, refs := range images {
				for _, ref := range refs {
					kind := "glance"
					if strings.Contains(ref, "glance-krm-fn") {
						kind = "fn"
					}
					if ref != c.want[kind] {
						t.Errorf("%s runs %s, want %s", obj, ref, c.want[kind])
					}
				}
			}
			var all []string
			for _, refs := range images {
				all = append(all, refs...)
			}
			if !slices.Contains(all, c.want["fn"]) {
				t.Errorf("no container runs the credentials image %s: %v", c.want["fn"], images)
			}
		})
	}
}

// TestTwoGlancesNamedLikeEachOthersObjects: with the real kustomize, a
// second Glance named like an object the first generates (its jobs'
// NetworkPolicy, glance-jobs) fails the build naming both Glances.
func TestTwoGlancesNamedLikeEachOthersObjects(t *testing.T) {
	dir := copyExample(t, "generated")
	g := filepath.Join(dir, "glance.yaml")
	b, err := os.ReadFile(g)
	if err != nil {
		t.Fatal(err)
	}
	second := strings.NewReplacer("  name: glance\n  namespace", "  name: glance-jobs\n  namespace", "    name: glance\n  type: S3", "    name: glance-jobs\n  type: S3",
		"  name: ceph-rgw\n", "  name: ceph-rgw-2\n", "image.example.com", "image-2.example.com").Replace(string(b))
	if second == string(b) {
		t.Fatal("examples/generated/glance.yaml changed: nothing to rename")
	}
	if err := os.WriteFile(g, append(b, "---\n"+second...), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, err := build(t, dir)
	for _, want := range []string{"Glance openstack/glance and Glance openstack/glance-jobs both render NetworkPolicy glance-jobs", "Glance openstack/glance-jobs and Glance openstack/glance both render NetworkPolicy glance-jobs"} {
		if err == nil || !strings.Contains(stderr, want) {
			t.Errorf("the build must fail saying %q; err %v, stderr:\n%s", want, err, stderr)
		}
	}
}
