// Package glancekrm is the glance-krm KRM function: it validates Glance and
// GlanceBackend objects, renders each Glance's backends.conf and
// glance-api.conf into content-hashed immutable objects, and wires the
// Glance workloads to them and to their credentials.
package glancekrm

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

// Name is how the function names itself in its results, so that a run that
// silently did not happen (kustomize skips exec functions without
// --enable-exec) is noticeable by the absence of these lines.
const Name = "glance-krm"

// Process is the function: it edits rl.Items and appends its results. It
// reports failure (and the binary exits non-zero) when any result is an
// error, because kustomize and kpt judge a function by its exit code.
func Process(rl *fn.ResourceList) (bool, error) {
	r := &run{items: rl.Items}
	r.collect()
	r.attach()
	for _, g := range r.sortedGlances() {
		r.render(g)
	}
	r.items = append(slices.DeleteFunc(r.items, func(o *fn.KubeObject) bool { return r.drop[o] }), r.added...)
	if !r.seen {
		r.info(nil, Name+": no Glance or GlanceBackend in the input; nothing to render")
	}
	sortResults(r.results)
	rl.Items = r.items
	rl.Results = append(rl.Results, r.results...)
	return !hasErrors(r.results), nil
}

type glanceEntry struct {
	obj      *fn.KubeObject
	g        *v1alpha1.Glance
	valid    bool
	backends []*backendEntry
}

type backendEntry struct {
	obj   *fn.KubeObject
	b     *v1alpha1.GlanceBackend
	valid bool
}

type objKey struct{ ns, name string }

type run struct {
	items    fn.KubeObjects
	results  fn.Results
	glances  map[objKey]*glanceEntry
	backends []*backendEntry
	seen     bool // any object of our API group and kinds, of any version

	// Indexes built in one pass, so that a large input costs linear time.
	workloads map[string][]*fn.KubeObject // by namespace
	copies    map[copyKey]fn.KubeObjects  // earlier generated copies
	drop      map[*fn.KubeObject]bool     // copies replaced or beyond history
	added     fn.KubeObjects              // rendered objects, appended at the end
}

func (r *run) add(rs ...*fn.Result) { r.results = append(r.results, rs...) }

func (r *run) info(obj *fn.KubeObject, msg string) {
	if obj == nil {
		r.add(&fn.Result{Severity: fn.Info, Message: msg})
		return
	}
	r.add(objectResult(obj, fn.Info, msg))
}

// collect decodes and validates every Glance and GlanceBackend.
func (r *run) collect() {
	r.glances = map[objKey]*glanceEntry{}
	r.workloads, r.copies, r.drop = map[string][]*fn.KubeObject{}, map[copyKey]fn.KubeObjects{}, map[*fn.KubeObject]bool{}
	for _, obj := range r.items {
		if isWorkloadKind(obj.GetAPIVersion(), obj.GetKind()) {
			r.workloads[obj.GetNamespace()] = append(r.workloads[obj.GetNamespace()], obj)
			continue
		}
		if k, ok := generatedKey(obj); ok {
			r.copies[k] = append(r.copies[k], obj)
			continue
		}
		gk := obj.GroupKind()
		if gk.Group != v1alpha1.Group || (gk.Kind != v1alpha1.GlanceKind && gk.Kind != v1alpha1.GlanceBackendKind) {
			continue
		}
		r.seen = true
		if v := obj.GroupVersionKind().Version; v != v1alpha1.Version {
			r.add(withTag(objectResult(obj, fn.Error, fmt.Sprintf(
				"apiVersion %s is not served by %s; use %s", obj.GetAPIVersion(), Name, v1alpha1.APIVersion)), tagRule, "apiVersion"))
			continue
		}
		if gk.Kind == v1alpha1.GlanceKind {
			g, errs, ok := decodeGlance(obj)
			if !ok {
				r.add(fieldResults(obj, errs)...)
				continue
			}
			errs = append(errs, v1alpha1.ValidateGlance(g)...)
			key := objKey{g.Namespace, g.Name}
			if prev, dup := r.glances[key]; dup {
				prev.valid = false
				errs = append(errs, field.Duplicate(field.NewPath("metadata", "name"), g.Name))
			}
			r.add(fieldResults(obj, errs)...)
			if _, dup := r.glances[key]; !dup {
				r.glances[key] = &glanceEntry{obj: obj, g: g, valid: len(errs) == 0}
			}
			continue
		}
		b, errs, ok := decodeBackend(obj)
		if !ok {
			r.add(fieldResults(obj, errs)...)
			continue
		}
		errs = append(errs, v1alpha1.ValidateGlanceBackend(b)...)
		r.add(fieldResults(obj, errs)...)
		r.backends = append(r.backends, &backendEntry{obj: obj, b: b, valid: len(errs) == 0})
	}
	slices.SortFunc(r.backends, func(a, b *backendEntry) int {
		return cmp.Or(cmp.Compare(a.b.Namespace, b.b.Namespace), cmp.Compare(a.b.Name, b.b.Name))
	})
}

// attach groups backends by (namespace, spec.glanceRef.name). A backend
// whose Glance is not in this input is passed through: GitOps ordering may
// put the Glance in another build.
func (r *run) attach() {
	for _, be := range r.backends {
		if be.b.Spec.GlanceRef.Name == "" {
			continue
		}
		if g, ok := r.glances[objKey{be.b.Namespace, be.b.Spec.GlanceRef.Name}]; ok {
			g.backends = append(g.backends, be)
			continue
		}
		r.add(withTag(objectResult(be.obj, fn.Info, fmt.Sprintf(
			"%s: %s: Glance %q is not in this input, so store %q is not rendered here; it is rendered by the build that holds the Glance",
			Name, v1alpha1.ReasonWaitingForParent, be.b.Spec.GlanceRef.Name, be.b.Name)), tagReason, v1alpha1.ReasonWaitingForParent))
	}
}

func (r *run) sortedGlances() []*glanceEntry {
	out := make([]*glanceEntry, 0, len(r.glances))
	for _, g := range r.glances {
		out = append(out, g)
	}
	slices.SortFunc(out, func(a, b *glanceEntry) int {
		return cmp.Or(cmp.Compare(a.g.Namespace, b.g.Namespace), cmp.Compare(a.g.Name, b.g.Name))
	})
	return out
}

// render runs the cross-object rules for one Glance and, when everything
// attached to it is valid, renders, stores and wires its configuration.
// Nothing is rendered for a Glance with any error: the build fails and the
// last-good objects stay live.
func (r *run) render(ge *glanceEntry) {
	g := ge.g
	backends := make([]*v1alpha1.GlanceBackend, len(ge.backends))
	valid := ge.valid
	for i, be := range ge.backends {
		backends[i] = be.b
		valid = valid && be.valid
	}
	// The cross-object rules run even when an object is invalid, so one run
	// reports every violation.
	stores := make([]string, len(backends))
	for i, b := range backends {
		stores[i] = b.Name
	}
	if errs := v1alpha1.ValidateExtraConfigStores(g.Spec.ExtraConfig, stores, field.NewPath("spec", "extraConfig")); len(errs) > 0 {
		r.add(fieldResults(ge.obj, errs)...)
		valid = false
	}
	defaultStore, err := v1alpha1.DefaultBackend(nsName(g.Namespace, g.Name), backends)
	if err != nil {
		r.add(withTag(withTag(objectResult(ge.obj, fn.Error, err.Error()), tagReason, v1alpha1.ReasonNoDefaultBackend), tagRule, "exactly-one-default"))
		valid = false
	}
	if !valid {
		r.info(ge.obj, fmt.Sprintf("%s: nothing rendered for Glance %s: fix the errors reported above", Name, nsName(g.Namespace, g.Name)))
		return
	}

	backendsConf, err := renderBackendsConf(g, backends)
	if err != nil {
		r.add(objectResult(ge.obj, fn.Error, "rendering backends.conf: "+err.Error()))
		return
	}
	apiConf, err := renderAPIConf(g, backends, defaultStore)
	if err != nil {
		r.add(objectResult(ge.obj, fn.Error, "rendering glance-api.conf: "+err.Error()))
		return
	}
	w := wiring{glance: g, backends: backends}
	for _, out := range []struct {
		r    rendered
		name *string
	}{
		{rendered{g, v1alpha1.ComponentBackends, v1alpha1.KeyBackendsConf, backendsConf}, &w.backendsSec},
		{rendered{g, v1alpha1.ComponentConfig, v1alpha1.KeyGlanceAPIConf, apiConf}, &w.configMap},
	} {
		key := copyKey{g.Namespace, g.Name, out.r.component, out.r.kind()}
		obj, drop, err := upsertGenerated(r.copies[key], out.r)
		if err != nil {
			r.add(objectResult(ge.obj, fn.Error, err.Error()))
			return
		}
		*out.name = obj.GetName()
		r.added = append(r.added, obj)
		for _, d := range drop {
			r.drop[d] = true
		}
	}

	wired := r.wireWorkloads(ge, w)
	if len(wired) == 0 {
		r.add(objectResult(ge.obj, fn.Warning, fmt.Sprintf(
			"%s: no Deployment or StatefulSet named %q or labelled %s=%s in namespace %q; the rendered Secret %s and ConfigMap %s are not mounted by anything",
			Name, g.Name, v1alpha1.LabelGlance, g.Name, g.Namespace, w.backendsSec, w.configMap)))
	}
	r.info(ge.obj, fmt.Sprintf("%s: rendered Glance %s: stores %s (default %s); Secret %s, ConfigMap %s; wired %s",
		Name, nsName(g.Namespace, g.Name), strings.Join(stores, ", "), defaultStore, w.backendsSec, w.configMap,
		cmp.Or(strings.Join(wired, ", "), "no workload")))
}

// wireWorkloads wires each Deployment or StatefulSet that belongs to the
// Glance: same namespace, and the Glance's name or its label.
func (r *run) wireWorkloads(ge *glanceEntry, w wiring) []string {
	var wired []string
	for _, obj := range r.workloads[ge.g.Namespace] {
		if obj.GetName() != ge.g.Name && obj.GetLabel(v1alpha1.LabelGlance) != ge.g.Name {
			continue
		}
		id := obj.GetKind() + " " + obj.GetName()
		rn := obj.MoveToResourceNode()
		warning, err := w.wire(rn)
		*obj = *fn.MoveToKubeObject(rn)
		switch {
		case err != nil:
			r.add(objectResult(obj, fn.Error, fmt.Sprintf("%s: wiring %s: %v", Name, id, err)))
		case warning != "":
			r.add(objectResult(obj, fn.Warning, fmt.Sprintf(
				"%s: %s belongs to Glance %q but was not wired: %s", Name, id, ge.g.Name, warning)))
		default:
			wired = append(wired, id)
		}
	}
	return wired
}
