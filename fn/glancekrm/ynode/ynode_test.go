package ynode

import (
	"fmt"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

func render(t *testing.T, n *yaml.Node) string {
	t.Helper()
	s, err := yaml.NewRNode(n).String()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Built nodes are what parsing the same YAML gives: tags included, so a
// "true" string stays a string and numbers stay numbers.
func TestNodes(t *testing.T) {
	n := Mapping("name", "glance", "quoted", "true", "enabled", true, "items", Seq(Str("a"), Str("b")))
	want := "name: glance\nquoted: \"true\"\nenabled: true\nitems:\n- a\n- b\n"
	if got := render(t, n); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if String(yaml.NewRNode(n), "name") != "glance" || String(yaml.NewRNode(n), "items") != "" || String(nil, "x") != "" {
		t.Error("String reads a scalar field only")
	}
}

// FromJSON sorts keys, leaves nulls out, and keeps integers integers.
func TestFromJSON(t *testing.T) {
	n := FromJSON(map[string]any{"b": float64(3), "a": []any{1.5, nil, "x"}, "gone": nil, "t": false})
	want := "a:\n- 1.5\n- null\n- x\nb: 3\nt: false\n"
	if got := render(t, n); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// Object drops the status and the zero values Go marshals to nulls.
func TestObject(t *testing.T) {
	obj, err := Object(map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "x", "labels": nil},
		"status": map[string]any{"phase": "x"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := obj.String(); got != "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n" {
		t.Errorf("got\n%s", got)
	}
}

func ExampleMapping() {
	n := Mapping("kind", "ConfigMap", "immutable", true)
	s, _ := yaml.NewRNode(n).String()
	fmt.Print(s)
	// Output:
	// kind: ConfigMap
	// immutable: true
}
