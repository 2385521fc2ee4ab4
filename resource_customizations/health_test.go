// Package customizations_test runs the Argo CD health checks of this
// folder as Argo CD's own test of resource_customizations does: every
// health.lua against each case of the health_test.yaml beside it, the
// object read from its testdata file, the returned status compared
// whole. Each case runs with the libraries Argo CD opens for a script of
// argocd-cm (the way users install these) and with all of them (a
// built-in script, once upstream).
package customizations_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/c5c3/glance-krm/internal/argohealth"
)

type healthTests struct {
	Tests []struct {
		InputPath    string            `json:"inputPath"`
		HealthStatus argohealth.Status `json:"healthStatus"`
	} `json:"tests"`
}

func TestLuaHealthScripts(t *testing.T) {
	found := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.Name() != "health.lua" {
			return err
		}
		found++
		dir := filepath.Dir(path)
		script, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		raw, err := os.ReadFile(filepath.Join(dir, "health_test.yaml"))
		if err != nil {
			return err
		}
		var cases healthTests
		if err := yaml.UnmarshalStrict(raw, &cases); err != nil {
			t.Fatalf("%s/health_test.yaml: %v", dir, err)
		}
		var inputs []string
		for _, c := range cases.Tests {
			inputs = append(inputs, c.InputPath)
			obj := map[string]any{}
			b, err := os.ReadFile(filepath.Join(dir, c.InputPath))
			if err != nil {
				t.Fatal(err)
			}
			if err := yaml.Unmarshal(b, &obj); err != nil {
				t.Fatalf("%s/%s: %v", dir, c.InputPath, err)
			}
			for _, open := range []bool{false, true} {
				t.Run(filepath.Join(dir, c.InputPath)+map[bool]string{false: " argocd-cm", true: " built-in"}[open], func(t *testing.T) {
					got, err := argohealth.Evaluate(string(script), obj, open)
					if err != nil {
						t.Fatal(err)
					}
					if got != c.HealthStatus {
						t.Errorf("got %+v, want %+v", got, c.HealthStatus)
					}
				})
			}
		}
		// Every testdata file is a case.
		files, _ := filepath.Glob(filepath.Join(dir, "testdata", "*.yaml"))
		for _, f := range files {
			if rel, _ := filepath.Rel(dir, f); !slices.Contains(inputs, rel) {
				t.Errorf("%s is in no case of %s/health_test.yaml", f, dir)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if found < 2 {
		t.Fatalf("%d health scripts found", found)
	}
}

// TestArgoCDConfigMapHoldsTheScripts: examples/argocd/argocd-cm-health.yaml,
// what a user merges into argocd-cm, holds every health.lua of this folder
// byte for byte under the key Argo CD reads for its group and kind
// (resource.customizations.health.<group>_<kind>), and nothing else.
func TestArgoCDConfigMapHoldsTheScripts(t *testing.T) {
	raw, err := os.ReadFile("../examples/argocd/argocd-cm-health.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cm struct {
		Kind     string                `json:"kind"`
		Metadata struct{ Name string } `json:"metadata"`
		Data     map[string]string     `json:"data"`
	}
	if err := yaml.Unmarshal(raw, &cm); err != nil {
		t.Fatal(err)
	}
	if cm.Kind != "ConfigMap" || cm.Metadata.Name != "argocd-cm" {
		t.Fatalf("%s %s, want the ConfigMap argocd-cm", cm.Kind, cm.Metadata.Name)
	}
	scripts, _ := filepath.Glob(filepath.Join("*", "*", "health.lua"))
	want := map[string]string{}
	for _, s := range scripts {
		b, err := os.ReadFile(s)
		if err != nil {
			t.Fatal(err)
		}
		group, kind := filepath.Base(filepath.Dir(filepath.Dir(s))), filepath.Base(filepath.Dir(s))
		want["resource.customizations.health."+group+"_"+kind] = string(b)
	}
	if len(want) < 2 {
		t.Fatalf("%d health scripts found", len(want))
	}
	for k, v := range want {
		if cm.Data[k] != v {
			t.Errorf("argocd-cm-health.yaml's %s is not %s's health.lua", k, k)
		}
	}
	for k := range cm.Data {
		if _, ok := want[k]; !ok {
			t.Errorf("argocd-cm-health.yaml holds %s, which no health.lua here is", k)
		}
	}
}
