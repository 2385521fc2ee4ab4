package examples_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// build of one step: every object by a name that survives content
// hashing (the db-sync Job by its prefix; a rendered file by the
// Deployments that mount it), with its YAML.
func stepObjects(t *testing.T, dir string) map[string]string {
	t.Helper()
	nodes := mustBuild(t, dir)
	mountedBy := map[string][]string{}
	for _, n := range nodes {
		if n.GetKind() == "Deployment" {
			cm, sec := mountedConfig(n)
			mountedBy[cm] = append(mountedBy[cm], n.GetName())
			mountedBy[sec] = append(mountedBy[sec], n.GetName())
		}
	}
	out := map[string]string{}
	for _, n := range nodes {
		key := n.GetKind() + "/" + n.GetName()
		switch {
		case n.GetKind() == "Job" && strings.HasPrefix(n.GetName(), "glance-db-sync-"):
			key = "Job/glance-db-sync"
		case n.GetKind() == "Job" && strings.HasPrefix(n.GetName(), "glance-db-contract-"):
			key = "Job/glance-db-contract"
		case strings.HasPrefix(n.GetName(), "glance-config-") || strings.HasPrefix(n.GetName(), "glance-backends-"):
			// Named by content: the same name is the same content.
			key = n.GetKind() + "/" + n.GetName() + " (files of " + strings.Join(slices.Sorted(slices.Values(mountedBy[n.GetName()])), ", ") + ")"
		}
		for _, a := range []string{"config.kubernetes.io/index", "internal.config.kubernetes.io/index", "internal.config.kubernetes.io/seqindent"} {
			_ = n.PipeE(yaml.ClearAnnotation(a)) // where the reader found it, not what it is
		}
		out[key] = n.MustString()
	}
	return out
}

// changes between two steps. A rendered file keeps its name exactly as
// long as its content, so it is only ever added or removed; the mounts
// named in its key are those of the step it is in.
type changes struct{ Added, Removed, Changed []string }

func diffSteps(before, after map[string]string) changes {
	var c changes
	strip := func(k string) string { name, _, _ := strings.Cut(k, " (files of"); return name }
	byName := func(m map[string]string) map[string]string {
		out := map[string]string{}
		for k := range m {
			out[strip(k)] = k
		}
		return out
	}
	b, a := byName(before), byName(after)
	for name, k := range a {
		switch old, ok := b[name]; {
		case !ok:
			c.Added = append(c.Added, k)
		case before[old] != after[k]:
			c.Changed = append(c.Changed, k)
		}
	}
	for name, k := range b {
		if _, ok := a[name]; !ok {
			c.Removed = append(c.Removed, k)
		}
	}
	slices.Sort(c.Added)
	slices.Sort(c.Removed)
	slices.Sort(c.Changed)
	return c
}

// TestSeveralAPIsExample builds the four commits of
// examples/several-apis with real kustomize and checks that each changes
// exactly the objects it should: adding an API changes nothing that
// exists but the db-contract Job's list of Deployments to wait for;
// moving stores changes the two APIs' workloads and files (and
// reruns db-sync and db-contract, which read the first API's files); switching the
// catalog changes the stable Service alone; removing the first API
// changes nothing of the other API, nor the stable Service.
func TestSeveralAPIsExample(t *testing.T) {
	steps := []string{"0-one-api", "1-add-api", "2-move-stores", "3-switch-catalog", "4-remove-first"}
	want := map[string]changes{
		"1-add-api": {
			Added: []string{
				"ConfigMap/" + nameOf(t, "1-add-api", "ConfigMap", "glance-next"),
				"Deployment/glance-next", "PodDisruptionBudget/glance-next",
				"Secret/" + nameOf(t, "1-add-api", "Secret", "glance-next"),
				"Service/glance-default", "Service/glance-next",
			},
		},
		"2-move-stores": {
			Added: []string{
				"ConfigMap/" + nameOf(t, "2-move-stores", "ConfigMap", "glance"),
				"ConfigMap/" + nameOf(t, "2-move-stores", "ConfigMap", "glance-next"),
				"Secret/" + nameOf(t, "2-move-stores", "Secret", "glance"),
			},
			Removed: []string{
				"ConfigMap/" + nameOf(t, "1-add-api", "ConfigMap", "glance"),
				"ConfigMap/" + nameOf(t, "1-add-api", "ConfigMap", "glance-next"),
				"Secret/" + nameOf(t, "1-add-api", "Secret", "glance-next"),
			},
			Changed: []string{"Deployment/glance", "Deployment/glance-next", "Glance/glance", "Job/glance-db-contract", "Job/glance-db-sync", "PodDisruptionBudget/glance-next"},
		},
		"3-switch-catalog": {Changed: []string{"Glance/glance", "Service/glance"}},
		"4-remove-first": {
			Removed: []string{
				"ConfigMap/" + nameOf(t, "3-switch-catalog", "ConfigMap", "glance"),
				"Deployment/glance", "PodDisruptionBudget/glance",
				"Secret/" + nameOf(t, "3-switch-catalog", "Secret", "glance"),
				"Service/glance-default",
			},
			Changed: []string{"Glance/glance", "Job/glance-db-contract", "Job/glance-db-sync"},
		},
	}
	// The contract Job waits for the new API's Deployment too.
	want["1-add-api"] = changes{Added: want["1-add-api"].Added, Changed: []string{"Glance/glance", "Job/glance-db-contract"}}
	for _, c := range want {
		slices.Sort(c.Added)
		slices.Sort(c.Removed)
		slices.Sort(c.Changed)
	}
	prev := stepObjects(t, "several-apis/"+steps[0])
	for _, step := range steps[1:] {
		cur := stepObjects(t, "several-apis/"+step)
		if diff := cmp.Diff(want[step], diffSteps(prev, cur)); diff != "" {
			t.Errorf("%s: changed objects (-want +got):\n%s", step, diff)
		}
		prev = cur
	}
	// The stable Service follows spec.catalogAPI.
	for step, instance := range map[string]string{"2-move-stores": "glance", "3-switch-catalog": "glance-next", "4-remove-first": "glance-next"} {
		var svc *yaml.RNode
		for _, n := range mustBuild(t, "several-apis/"+step) {
			if n.GetKind() == "Service" && n.GetName() == "glance" {
				svc = n
			}
		}
		if got := str(t, svc, "spec", "selector", "app.kubernetes.io/instance"); got != instance {
			t.Errorf("%s: Service glance selects instance %q, want %q", step, got, instance)
		}
	}
}

// nameOf is the rendered file of a kind (ConfigMap or Secret) that a
// Deployment mounts in a step, keyed as stepObjects keys it.
func nameOf(t *testing.T, step, kind, deployment string) string {
	t.Helper()
	objs := stepObjects(t, "several-apis/"+step)
	for k := range objs {
		if !strings.HasPrefix(k, kind+"/glance-") || !strings.Contains(k, " (files of ") {
			continue
		}
		mounts := strings.TrimSuffix(k[strings.Index(k, " (files of ")+len(" (files of "):], ")")
		if slices.Contains(strings.Split(mounts, ", "), deployment) {
			return strings.TrimPrefix(k, kind+"/")
		}
	}
	t.Fatalf("%s: no %s mounted by Deployment %s", step, kind, deployment)
	return ""
}
