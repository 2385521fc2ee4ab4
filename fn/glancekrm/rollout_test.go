package glancekrm

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kptdev/krm-functions-sdk/go/fn"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/c5c3/glance-krm/fn/glancekrm/history"
	"github.com/c5c3/glance-krm/internal/fntest"
	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

// everyFeature is a Glance with every optional object the generator can
// emit: two APIs (a Service each), autoscaling, a gateway, network
// policies, db-purge, the image cache, and a store drain.
var everyFeature = fntest.Docs(glanceWith(twoAPIs+`  autoscaling: {maxReplicas: 5, targetCPUUtilization: 70}
  networkPolicy: {ingress: [{namespaceSelector: {matchLabels: {team: x}}}]}
  gateway: {parentRef: {name: gw}, hostname: image.example.com}
  dbPurge: {retentionDays: 7}
  imageCache: {}
`), drainingBackend("a", "b", false), fntest.Backend("b", "glance", true))

// TestNoObjectBeforeWhatItsHealthNeeds: every object of the render is in
// a wave, and no object is in an earlier wave than an object its health
// (or, for the Jobs, its work) depends on — read off the objects
// themselves: what a pod mounts, runs as, calls, the policies that admit
// its traffic; what an HPA scales, a
// PDB counts, an HTTPRoute routes to; a Job's depends-on; and what the
// Glance's and GlanceBackends' conditions read. Argo CD waits for each
// wave to be healthy and fails the sync on a Degraded object, and Flux
// applies the waves as chained Kustomizations that wait: an object
// before its dependency would fail or hold the sync. Run on a fresh
// render and on an upgrade of it (kpt's second run after a release bump,
// with the previous copies kept).
func TestNoObjectBeforeWhatItsHealthNeeds(t *testing.T) {
	rl, failed := runFnOn(t, everyFeature)
	if failed {
		t.Fatalf("failed: %s", fntest.ResultLines(rl.Results))
	}
	kinds := map[string]bool{}
	for _, o := range rl.Items {
		k := o.GetKind()
		if o.GetKind() == "Job" {
			k += "/" + o.GetLabel("app.kubernetes.io/component")
		}
		kinds[k] = true
	}
	want := []string{"ConfigMap", "Secret", "Deployment", "Service", "PodDisruptionBudget", "HorizontalPodAutoscaler", "NetworkPolicy",
		"HTTPRoute", "CronJob", "Job/db-sync", "Job/db-contract", "Job/store-drain", "ServiceAccount", "Role", "RoleBinding", "Glance", "GlanceBackend"}
	for _, k := range want {
		if !kinds[k] {
			t.Errorf("the render holds no %s: the input no longer exercises every generated kind", k)
		}
	}
	if extra := slices.DeleteFunc(slices.Sorted(maps.Keys(kinds)), func(k string) bool { return slices.Contains(want, k) }); len(extra) > 0 {
		t.Errorf("the render holds %v, which this test does not know the health of: add them to healthNeeds", extra)
	}
	checkWaves(t, "fresh", rl.Items)

	upgraded := strings.ReplaceAll(string(itemsOf(t, mustYAML(t, rl))), `"2025.2"`, `"2026.1"`)
	out, failed := runFn(t, []byte(upgraded))
	rl2, err := fn.ParseResourceList(out)
	if err != nil || failed {
		t.Fatalf("the upgrade failed (%v): %s", err, fntest.ResultLines(rl2.Results))
	}
	checkWaves(t, "upgrade", rl2.Items)
}

// checkWaves holds every object to the waves of what it needs.
func checkWaves(t *testing.T, when string, items fn.KubeObjects) {
	t.Helper()
	wave := map[*fn.KubeObject]int{}
	for _, o := range items {
		if _, set := o.GetAnnotations()[v1alpha1.AnnotationArgoCDSyncWave]; !set {
			t.Errorf("%s: %s %s has no sync wave", when, o.GetKind(), o.GetName())
		}
		wave[o] = v1alpha1.WaveOf(o.GetAnnotations())
		if w := wave[o]; w < v1alpha1.WavePrepare || w > v1alpha1.WaveAfter {
			t.Errorf("%s: %s %s is in wave %d, outside the three", when, o.GetKind(), o.GetName(), w)
		}
	}
	for _, o := range items {
		for _, n := range healthNeeds(t, o, items) {
			switch {
			case n.strict && wave[n.obj] >= wave[o]:
				t.Errorf("%s: %s %s (wave %d) needs %s %s done first (%s), which is in wave %d", when,
					o.GetKind(), o.GetName(), wave[o], n.obj.GetKind(), n.obj.GetName(), n.why, wave[n.obj])
			case wave[n.obj] > wave[o]:
				t.Errorf("%s: %s %s (wave %d) needs %s %s (%s), which comes later, in wave %d", when,
					o.GetKind(), o.GetName(), wave[o], n.obj.GetKind(), n.obj.GetName(), n.why, wave[n.obj])
			}
		}
	}
}

// need is an object another one depends on; strict when it must be
// done (complete, rolled out, there) before the dependent is applied,
// not merely applied in the same wave.
type need struct {
	obj    *fn.KubeObject
	strict bool
	why    string
}

// healthNeeds reads what an object's health (or a Job's work) depends
// on off the objects of the render.
func healthNeeds(t *testing.T, o *fn.KubeObject, items fn.KubeObjects) []need {
	t.Helper()
	var out []need
	add := func(strict bool, why string, match func(*fn.KubeObject) bool) {
		for _, d := range items {
			if d != o && d.GetNamespace() == o.GetNamespace() && match(d) {
				out = append(out, need{d, strict, why})
			}
		}
	}
	named := func(kind, name string) func(*fn.KubeObject) bool {
		return func(d *fn.KubeObject) bool { return d.GetKind() == kind && d.GetName() == name }
	}
	glance := o.GetLabel(v1alpha1.LabelGlance)
	component := func(d *fn.KubeObject) string { return d.GetLabel("app.kubernetes.io/component") }
	pod := func(meta metav1.ObjectMeta, spec corev1.PodSpec, where string) {
		// In a namespace that denies by default, only the policies that
		// select a pod let it reach its database, Keystone, the API.
		add(false, "it admits the traffic of "+where, func(d *fn.KubeObject) bool {
			if d.GetKind() != "NetworkPolicy" {
				return false
			}
			sel, _, _ := d.NestedStringMap("spec", "podSelector", "matchLabels")
			return labels.SelectorFromSet(sel).Matches(labels.Set(meta.Labels))
		})
		for _, v := range spec.Volumes {
			var srcs []corev1.VolumeProjection
			if v.Projected != nil {
				srcs = v.Projected.Sources
			}
			srcs = append(srcs, corev1.VolumeProjection{ConfigMap: asProjection(v.ConfigMap), Secret: asSecretProjection(v.Secret)})
			for _, s := range srcs {
				if s.ConfigMap != nil {
					add(false, where+" mounts it", named("ConfigMap", s.ConfigMap.Name))
				}
				if s.Secret != nil {
					add(false, where+" mounts it", named("Secret", s.Secret.Name))
				}
			}
		}
		if spec.ServiceAccountName != "" {
			add(false, where+" runs as it", named("ServiceAccount", spec.ServiceAccountName))
		}
		for _, c := range spec.Containers {
			for _, e := range c.Env {
				if e.Name == "GLANCE_URL" {
					host, _, _ := strings.Cut(strings.TrimPrefix(e.Value, "http://"), ".")
					add(true, where+" calls it", named("Service", host))
				}
			}
		}
	}
	dependsOn := func() {
		for _, ref := range strings.Split(o.GetAnnotation("config.kubernetes.io/depends-on"), ",") {
			if ref == "" {
				continue
			}
			parts := strings.Split(ref, "/")
			add(true, "its depends-on names it", named(parts[len(parts)-2], parts[len(parts)-1]))
		}
	}
	switch o.GetKind() {
	case "Deployment":
		var d appsv1.Deployment
		as(t, o, &d)
		pod(d.Spec.Template.ObjectMeta, d.Spec.Template.Spec, "its pods")
		// glance-api serves the schema the db-sync Job migrates to.
		add(true, "its release's schema", func(d *fn.KubeObject) bool {
			return d.GetKind() == "Job" && component(d) == "db-sync" && d.GetLabel(v1alpha1.LabelGlance) == glance
		})
	case "Job":
		var j batchv1.Job
		as(t, o, &j)
		pod(j.Spec.Template.ObjectMeta, j.Spec.Template.Spec, "its pod")
		dependsOn()
	case "CronJob":
		var c batchv1.CronJob
		as(t, o, &c)
		pod(c.Spec.JobTemplate.Spec.Template.ObjectMeta, c.Spec.JobTemplate.Spec.Template.Spec, "its pods")
		add(true, "it purges the schema", func(d *fn.KubeObject) bool { return d.GetKind() == "Job" && component(d) == "db-sync" })
	case "HorizontalPodAutoscaler":
		var h autoscalingv2.HorizontalPodAutoscaler
		as(t, o, &h)
		add(true, "FailedGetScale, Degraded, while it is missing", named(h.Spec.ScaleTargetRef.Kind, h.Spec.ScaleTargetRef.Name))
	case "PodDisruptionBudget":
		var p policyv1.PodDisruptionBudget
		as(t, o, &p)
		add(true, "it counts their pods", selects(t, p.Spec.Selector))
	case "HTTPRoute":
		var r gatewayv1.HTTPRoute
		as(t, o, &r)
		for _, rule := range r.Spec.Rules {
			for _, b := range rule.BackendRefs {
				add(true, "ResolvedRefs, Degraded, while it is missing", named("Service", string(b.Name)))
			}
		}
	case "RoleBinding":
		var b rbacv1.RoleBinding
		as(t, o, &b)
		add(false, "it binds it", named(b.RoleRef.Kind, b.RoleRef.Name))
		for _, s := range b.Subjects {
			add(false, "it binds it", named(s.Kind, s.Name))
		}
	case v1alpha1.GlanceKind:
		// BackendsReady, DatabaseReady and StoresDrained read the
		// backends, the Jobs, the Deployments and the drain records.
		add(false, "its conditions read it", func(d *fn.KubeObject) bool {
			return d.GetLabel(v1alpha1.LabelGlance) == o.GetName() && slices.Contains([]string{"Job", "Deployment", "ConfigMap"}, d.GetKind()) ||
				d.GetKind() == v1alpha1.GlanceBackendKind
		})
		add(true, "DatabaseReady waits for its schema", func(d *fn.KubeObject) bool {
			return d.GetKind() == "Job" && component(d) == "db-sync" && d.GetLabel(v1alpha1.LabelGlance) == o.GetName()
		})
	case v1alpha1.GlanceBackendKind:
		ref, _, _ := o.NestedString("spec", "glanceRef", "name")
		add(true, "ConfigProjected reads the Deployments that mount it", func(d *fn.KubeObject) bool {
			return d.GetKind() == "Deployment" && d.GetLabel(v1alpha1.LabelGlance) == ref
		})
		add(false, "ConfigProjected reads it", func(d *fn.KubeObject) bool {
			return d.GetKind() == "Secret" && d.GetLabel(v1alpha1.LabelGlance) == ref
		})
	}
	return out
}

func as(t *testing.T, o *fn.KubeObject, ptr any) {
	t.Helper()
	if err := o.As(ptr); err != nil {
		t.Fatalf("%s %s: %v", o.GetKind(), o.GetName(), err)
	}
}

// selects matches the Deployments whose pods a selector selects.
func selects(t *testing.T, sel *metav1.LabelSelector) func(*fn.KubeObject) bool {
	t.Helper()
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		t.Fatal(err)
	}
	return func(d *fn.KubeObject) bool {
		if d.GetKind() != "Deployment" {
			return false
		}
		l, _, _ := d.NestedStringMap("spec", "template", "metadata", "labels")
		return s.Matches(labels.Set(l))
	}
}

func asProjection(v *corev1.ConfigMapVolumeSource) *corev1.ConfigMapProjection {
	if v == nil {
		return nil
	}
	return &corev1.ConfigMapProjection{LocalObjectReference: v.LocalObjectReference}
}

func asSecretProjection(v *corev1.SecretVolumeSource) *corev1.SecretProjection {
	if v == nil {
		return nil
	}
	return &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: v.SecretName}}
}

// TestWavesOfTheUsersObjects: the Glance and its GlanceBackends go to
// the last wave and a hand-written workload the function wires to the
// workload wave, each only when it names no wave of its own; what names
// one keeps it, and a second run changes nothing.
func TestWavesOfTheUsersObjects(t *testing.T) {
	withWave := func(doc, name, wave string) string {
		return strings.Replace(doc, "metadata: {name: "+name+", namespace: ns", "metadata: {name: "+name+", namespace: ns, annotations: {argocd.argoproj.io/sync-wave: \""+wave+"\"}", 1)
	}
	for _, c := range []struct {
		name  string
		input string
		want  map[string]string // Kind/name -> wave
	}{
		{"none set", fntest.Docs(fntest.Glance, fntest.Backend("a", "glance", true), fntest.Backend("b", "glance", false), fntest.Workload("glance", "", plainContainer)),
			map[string]string{"Glance/glance": "2", "GlanceBackend/a": "2", "GlanceBackend/b": "2", "Deployment/glance": "1"}},
		{"the user's kept", fntest.Docs(withWave(fntest.Glance, "glance", "5"), withWave(fntest.Backend("a", "glance", true), "a", "-1"), fntest.Backend("b", "glance", false),
			withWave(fntest.Workload("glance", "", plainContainer), "glance", "0")),
			map[string]string{"Glance/glance": "5", "GlanceBackend/a": "-1", "GlanceBackend/b": "2", "Deployment/glance": "0"}},
		{"a backend whose Glance another build holds", fntest.Backend("a", "elsewhere", true),
			map[string]string{"GlanceBackend/a": "2"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, failed := runFn(t, fntest.ResourceList(t, []byte(c.input)))
			if failed {
				t.Fatalf("failed:\n%s", out)
			}
			rl, err := fn.ParseResourceList(out)
			if err != nil {
				t.Fatal(err)
			}
			for id, w := range c.want {
				kind, name, _ := strings.Cut(id, "/")
				o := fntest.Find(rl.Items, kind, name)
				if o == nil {
					t.Fatalf("no %s in the output", id)
				}
				if got, set := o.GetAnnotations()[v1alpha1.AnnotationArgoCDSyncWave]; !set || got != w {
					t.Errorf("%s is in wave %q (set: %v), want %q", id, got, set, w)
				}
			}
			again, _ := runFn(t, itemsOf(t, out))
			if string(itemsOf(t, again)) != string(itemsOf(t, out)) {
				t.Error("a second run changed the output")
			}
		})
	}
}

// TestAWorkloadNotWiredKeepsItsWave: a workload the function leaves
// alone (it only carries the Glance's label) is not put in a wave.
func TestAWorkloadNotWiredKeepsItsWave(t *testing.T) {
	labelled := fntest.Workload("other", ", labels: {glance.openstack.c5c3.io/glance: glance}", "        image: busybox\n        command: [sleep]\n")
	labelled = strings.Replace(labelled, "- name: glance-api", "- name: sidecar", 1)
	rl, failed := runFnOn(t, fntest.Docs(fntest.Glance, fntest.Backend("a", "glance", true), fntest.Workload("glance", "", plainContainer), labelled))
	if failed {
		t.Fatalf("failed: %s", fntest.ResultLines(rl.Results))
	}
	o := fntest.Find(rl.Items, "Deployment", "other")
	if o == nil {
		t.Fatal("no Deployment other")
	}
	if w, set := o.GetAnnotations()[v1alpha1.AnnotationArgoCDSyncWave]; set {
		t.Errorf("a workload the function did not wire is put in wave %q", w)
	}
	if fmt.Sprint(fntest.Find(rl.Items, "Deployment", "glance").GetAnnotation(v1alpha1.AnnotationArgoCDSyncWave)) != "1" {
		t.Error("the wired workload is not in wave 1")
	}
}

// state is a ResourceList fed back round after round, as a kpt package
// holds the function's output and runs it again after each edit.
type state struct {
	t  *testing.T
	rl *fn.ResourceList
}

func newState(t *testing.T, inputFile string) *state {
	input, err := os.ReadFile(inputFile)
	if err != nil {
		t.Fatal(err)
	}
	rl, err := fn.ParseResourceList(fntest.ResourceList(t, input))
	if err != nil {
		t.Fatal(err)
	}
	return &state{t: t, rl: rl}
}

func (s *state) render() {
	s.t.Helper()
	b, err := s.rl.ToYAML()
	if err != nil {
		s.t.Fatal(err)
	}
	out, failed := runFn(s.t, b)
	if s.rl, err = fn.ParseResourceList(out); err != nil {
		s.t.Fatal(err)
	}
	if failed {
		s.t.Fatalf("render failed: %v", s.rl.Results)
	}
	s.rl.Results = nil
}

func (s *state) object(kind, name string) *fn.KubeObject {
	for _, o := range s.rl.Items {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	s.t.Fatalf("no %s %s", kind, name)
	return nil
}

func (s *state) set(kind, name string, value any, path ...string) {
	s.t.Helper()
	if err := s.object(kind, name).SetNestedField(value, path...); err != nil {
		s.t.Fatal(err)
	}
}

// copies lists the generated objects of one kind as name -> revision.
func (s *state) copies(kind string) map[string]string {
	out := map[string]string{}
	for _, o := range s.rl.Items {
		if o.GetKind() == kind && o.GetLabel(v1alpha1.LabelManagedBy) == v1alpha1.ManagedByGlanceKRM {
			out[o.GetName()] = o.GetAnnotation(v1alpha1.AnnotationRevision)
		}
	}
	return out
}

func (s *state) mounted() (configMap, secret string) {
	d := s.object("Deployment", "glance")
	vols, _, _ := d.NestedSlice("spec", "template", "spec", "volumes")
	for _, v := range vols {
		if v.GetString("name") != v1alpha1.VolumeConfig {
			continue
		}
		for _, src := range v.GetMap("projected").GetSlice("sources") {
			if cm := src.GetMap("configMap"); cm != nil {
				configMap = cm.GetString("name")
			}
			if sec := src.GetMap("secret"); sec != nil {
				secret = sec.GetString("name")
			}
		}
	}
	return configMap, secret
}

// TestHistory: a default flip changes the ConfigMap only; flipping back
// reuses the old name as the newest revision; at most history.Limit copies
// of each kind are kept, the oldest dropped first; adding a backend changes
// both names.
func TestHistory(t *testing.T) {
	s := newState(t, "testdata/standalone/input.yaml")
	s.render()
	cm1, sec1 := s.mounted()
	want := func(kind string, w map[string]string) {
		t.Helper()
		if diff := cmp.Diff(w, s.copies(kind)); diff != "" {
			t.Errorf("%s copies (-want +got):\n%s", kind, diff)
		}
	}
	want("ConfigMap", map[string]string{cm1: "1"})
	want("Secret", map[string]string{sec1: "1"})

	flip := func(newDefault string) {
		for _, b := range []string{"primary", "secondary"} {
			s.set("GlanceBackend", b, b == newDefault, "spec", "isDefault")
		}
		s.render()
	}
	flip("secondary")
	cm2, sec2 := s.mounted()
	if cm2 == cm1 || sec2 != sec1 {
		t.Fatalf("after a default flip: ConfigMap %s -> %s (must change), Secret %s -> %s (must not)", cm1, cm2, sec1, sec2)
	}
	want("ConfigMap", map[string]string{cm1: "1", cm2: "2"})
	want("Secret", map[string]string{sec1: "1"})

	flip("primary")
	if cm, _ := s.mounted(); cm != cm1 {
		t.Fatalf("flipping back mounts %s, want the first ConfigMap %s again", cm, cm1)
	}
	want("ConfigMap", map[string]string{cm1: "3", cm2: "2"})

	s.set("Glance", "glance", map[string]any{"DEFAULT": map[string]any{"show_image_direct_url": "true"}}, "spec", "extraConfig")
	s.render()
	cm3, _ := s.mounted()
	want("ConfigMap", map[string]string{cm1: "3", cm2: "2", cm3: "4"})

	s.set("Glance", "glance", map[string]any{"DEFAULT": map[string]any{"show_image_direct_url": "false"}}, "spec", "extraConfig")
	s.render()
	cm4, _ := s.mounted()
	want("ConfigMap", map[string]string{cm1: "3", cm3: "4", cm4: "5"}) // cm2, the oldest, is dropped

	// Adding a backend changes both names.
	third := s.object("GlanceBackend", "secondary").Copy()
	if err := third.SetName("tertiary"); err != nil {
		t.Fatal(err)
	}
	s.rl.Items = append(s.rl.Items, third)
	s.render()
	cm5, sec5 := s.mounted()
	if cm5 == cm4 || sec5 == sec1 {
		t.Fatalf("adding a backend must change both names: ConfigMap %s -> %s, Secret %s -> %s", cm4, cm5, sec1, sec5)
	}
	want("Secret", map[string]string{sec1: "1", sec5: "2"})
	if n := len(s.copies("ConfigMap")); n != history.Limit {
		t.Errorf("%d ConfigMap copies, want %d", n, history.Limit)
	}
}

// TestDeterministic: the same input gives byte-identical output, run after
// run and whatever the order of the input objects.
func TestDeterministic(t *testing.T) {
	for name, input := range allInputs(t) {
		t.Run(name, func(t *testing.T) {
			rl, err := fn.ParseResourceList(input)
			if err != nil {
				t.Fatal(err)
			}
			first, _ := runFn(t, input)
			rng := rand.New(rand.NewPCG(1, 2))
			for i := range 20 {
				items := slices.Clone(rl.Items)
				rng.Shuffle(len(items), func(a, b int) { items[a], items[b] = items[b], items[a] })
				// ToYAML would sort the items: write them in this order by hand.
				in := []byte("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n")
				for _, it := range items {
					in = append(in, indentItem(it.String())...)
				}
				out, _ := runFn(t, in)
				if diff := cmp.Diff(string(first), string(out)); diff != "" {
					t.Fatalf("run %d with shuffled input differs (-first +this):\n%s", i, diff)
				}
			}
		})
	}
}

func indentItem(doc string) string {
	lines := strings.Split(strings.TrimSuffix(doc, "\n"), "\n")
	return "- " + strings.Join(lines, "\n  ") + "\n"
}

// TestHistoryWithSeveralAPIs: under kpt each API's current files stay
// current while another API's change; the files an API no longer mounts
// become history like any earlier copy.
func TestHistoryWithSeveralAPIs(t *testing.T) {
	s := newState(t, "testdata/several-apis/input.yaml")
	s.render()
	before := s.copies("ConfigMap")
	if len(before) != 2 {
		t.Fatalf("two APIs with different stores: want two ConfigMaps, got %v", before)
	}
	defaultCM, _ := s.mounted()
	s.set("Glance", "glance", []any{
		map[string]any{"name": "default"},
		map[string]any{"name": "next", "replicas": 1, "backends": []any{"a", "b"}, "defaultBackend": "b"},
	}, "spec", "apis")
	s.render()
	after := s.copies("ConfigMap")
	if len(after) != 3 || after[defaultCM] != "1" {
		t.Errorf("next's change must add one ConfigMap and keep default's as it was: before %v, after %v", before, after)
	}
	if cm, _ := s.mounted(); cm != defaultCM {
		t.Errorf("the default API's Deployment moved from %s to %s when only next changed", defaultCM, cm)
	}
	s.render()
	if again := s.copies("ConfigMap"); !cmp.Equal(again, after) {
		t.Errorf("a second run changed the copies: %v -> %v", after, again)
	}
}
