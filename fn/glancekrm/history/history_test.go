package history

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

var g = func() *v1alpha1.Glance {
	g := &v1alpha1.Glance{}
	g.Name, g.Namespace = "glance", "ns"
	return g
}()

func config(content string) Rendered {
	return Rendered{Glance: g, Component: v1alpha1.ComponentConfig, Data: map[string]string{"glance-api.conf": content}}
}

func TestName(t *testing.T) {
	a, b := config("a"), config("b")
	if a.Name() == b.Name() {
		t.Errorf("two contents, one name %s", a.Name())
	}
	if a.Name() != config("a").Name() {
		t.Error("one content, two names")
	}
	// Every file counts, and no two sets of files hash alike.
	two := Rendered{Glance: g, Component: v1alpha1.ComponentConfig, Data: map[string]string{"a": "b=c", "d": ""}}
	shifted := Rendered{Glance: g, Component: v1alpha1.ComponentConfig, Data: map[string]string{"a": "b", "c": "d"}}
	if two.Name() == shifted.Name() {
		t.Errorf("the file boundaries do not count: %s", two.Name())
	}
	if want := "Secret"; (Rendered{Component: v1alpha1.ComponentBackends}).Kind() != want {
		t.Errorf("backends are not a %s", want)
	}
}

// revisions are the revisions of objs, by name.
func revisions(objs fn.KubeObjects) map[string]int {
	out := map[string]int{}
	for _, o := range objs {
		out[o.GetName()] = RevisionOf(o)
	}
	return out
}

func TestUpsert(t *testing.T) {
	// copies builds earlier copies of the given contents, revision 1, 2, ...
	copies := func(contents ...string) fn.KubeObjects {
		var out fn.KubeObjects
		for i, c := range contents {
			out = append(out, config(c).object(i+1))
		}
		return out
	}
	for name, c := range map[string]struct {
		copies  fn.KubeObjects
		render  []string
		mounted []string
		objs    map[string]int // name -> revision
		dropped []string
	}{
		"the first render is revision 1": {render: []string{"a"},
			objs: map[string]int{config("a").Name(): 1}},
		"the same render again changes nothing": {copies: copies("a"), render: []string{"a"},
			objs: map[string]int{config("a").Name(): 1}, dropped: []string{config("a").Name()}},
		"a change is the newest revision": {copies: copies("a"), render: []string{"b"},
			objs: map[string]int{config("b").Name(): 2}},
		"an earlier copy used again becomes the newest": {copies: copies("a", "b"), render: []string{"a"},
			objs: map[string]int{config("a").Name(): 3}, dropped: []string{config("a").Name()}},
		"a mounted copy keeps its revision": {copies: copies("a", "b"), render: []string{"a"}, mounted: []string{config("a").Name()},
			objs: map[string]int{config("a").Name(): 1}, dropped: []string{config("a").Name()}},
		"at most Limit copies remain": {copies: copies("a", "b", "c"), render: []string{"d"},
			objs: map[string]int{config("d").Name(): 4}, dropped: []string{config("a").Name()}},
		"two APIs with one content share a copy": {render: []string{"a", "a"},
			objs: map[string]int{config("a").Name(): 1}},
	} {
		t.Run(name, func(t *testing.T) {
			var rs []Rendered
			for _, r := range c.render {
				rs = append(rs, config(r))
			}
			mounted := map[string]bool{}
			for _, m := range c.mounted {
				mounted[m] = true
			}
			objs, drop, err := Upsert(c.copies, rs, mounted)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(c.objs, revisions(objs)); diff != "" {
				t.Errorf("objects (-want +got):\n%s", diff)
			}
			var dropped []string
			for _, d := range drop {
				dropped = append(dropped, d.GetName())
			}
			if diff := cmp.Diff(c.dropped, dropped); diff != "" {
				t.Errorf("dropped (-want +got):\n%s", diff)
			}
		})
	}
}

func TestKeyOf(t *testing.T) {
	obj := config("a").object(1)
	k, ok := KeyOf(obj)
	if diff := cmp.Diff(Key{Namespace: "ns", Glance: "glance", Component: v1alpha1.ComponentConfig, Kind: "ConfigMap"}, k); !ok || diff != "" {
		t.Errorf("KeyOf %v (-want +got):\n%s", ok, diff)
	}
	// An overlay's labels: may overwrite managed-by: the revision still
	// marks the copy.
	if err := obj.SetLabel(v1alpha1.LabelManagedBy, "someone"); err != nil {
		t.Fatal(err)
	}
	if _, ok := KeyOf(obj); !ok {
		t.Error("a relabelled copy is not recognised")
	}
	user, _ := fn.ParseKubeObject([]byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: mine, labels: {" + v1alpha1.LabelGlance + ": glance}}"))
	if _, ok := KeyOf(user); ok {
		t.Error("a user's ConfigMap is taken for a copy")
	}
}

func TestMounted(t *testing.T) {
	pod := yaml.MustParse(`spec:
  template:
    spec:
      volumes:
      - {name: a, configMap: {name: cm}}
      - {name: b, secret: {secretName: sec}}
      - name: c
        projected:
          sources: [{secret: {name: projected}}, {configMap: {name: projected-cm}}]
      containers: [{name: x, env: [{name: NOT, valueFrom: {configMapKeyRef: {name: env-cm, key: k}}}]}]
`)
	got := map[string]bool{}
	Mounted(pod.YNode(), got)
	if diff := cmp.Diff(map[string]bool{"cm": true, "sec": true, "projected": true, "projected-cm": true}, got); diff != "" {
		t.Errorf("mounted (-want +got):\n%s", diff)
	}
}
