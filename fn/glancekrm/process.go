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
	r := &invocation{items: rl.Items}
	var cfgResults fn.Results
	r.config, cfgResults = readConfig(rl.FunctionConfig)
	r.add(cfgResults...)
	r.projectControlPlanes()
	r.collect()
	r.attach()
	r.claim()
	for _, g := range r.sortedGlances() {
		r.render(g)
	}
	r.items = append(slices.DeleteFunc(r.items, func(o *fn.KubeObject) bool { return r.drop[o] }), r.added...)
	if !r.seen {
		r.info(nil, Name+": no Glance or GlanceBackend in the input; nothing to render")
	}
	redactResults(r.results)
	sortResults(r.results)
	rl.Items = r.items
	rl.Results = append(rl.Results, r.results...)
	return !hasErrors(r.results), nil
}

type glanceEntry struct {
	obj       *fn.KubeObject
	g         *v1alpha1.Glance
	valid     bool
	backends  []*backendEntry
	broken    []string         // attached backends that could not be decoded
	names     []string         // its name, then the names kustomize renamed it from
	workloads []*fn.KubeObject // the workloads it alone claims
}

type backendEntry struct {
	obj   *fn.KubeObject
	b     *v1alpha1.GlanceBackend
	valid bool
}

type objKey struct{ ns, name string }

// msgNothingRendered is the summary of a Glance the run refused.
const msgNothingRendered = "nothing rendered for Glance %s: fix the errors reported above"

// invocation is one run of the function over one ResourceList: what it
// collected, and the results so far.
type invocation struct {
	config   config
	items    fn.KubeObjects
	results  fn.Results
	glances  map[objKey]*glanceEntry
	backends []*backendEntry
	seen     bool // any object of our API group and kinds, of any version
	// stateless is true under kustomize (and so Argo CD): generated copies
	// in its input come from a base's render in the same build, never from
	// an earlier run, so they are replaced rather than kept as history.
	stateless bool
	byName    map[objKey]*glanceEntry // every name a Glance was known by

	// Indexes built in one pass, so that a large input costs linear time.
	workloads  map[string][]*fn.KubeObject // by namespace
	configMaps map[objKey]*fn.KubeObject   // the input's own ConfigMaps
	copies     map[copyKey]fn.KubeObjects  // earlier generated copies
	drop       map[*fn.KubeObject]bool     // copies replaced or beyond history
	// generatedBy are the objects earlier runs generated, by Glance;
	// userObjects are the identities of the input's other objects.
	generatedBy map[objKey]fn.KubeObjects
	userObjects map[string]bool
	added       fn.KubeObjects // rendered objects, appended at the end
}

func (r *invocation) add(rs ...*fn.Result) { r.results = append(r.results, rs...) }

func (r *invocation) info(obj *fn.KubeObject, msg string) {
	if obj == nil {
		r.add(&fn.Result{Severity: fn.Info, Message: prefixed(msg)})
		return
	}
	r.add(objectResult(obj, fn.Info, msg))
}

// collect decodes and validates every Glance and GlanceBackend.
func (r *invocation) collect() {
	r.glances, r.byName = map[objKey]*glanceEntry{}, map[objKey]*glanceEntry{}
	r.workloads, r.copies, r.drop = map[string][]*fn.KubeObject{}, map[copyKey]fn.KubeObjects{}, map[*fn.KubeObject]bool{}
	r.configMaps = map[objKey]*fn.KubeObject{}
	r.generatedBy, r.userObjects = map[objKey]fn.KubeObjects{}, map[string]bool{}
	seenBackends := map[objKey]*backendEntry{}
	var broken []*fn.KubeObject
	for _, obj := range r.items {
		if obj.GetAnnotation(annotationKustomizeID) != "" {
			r.stateless = true
		}
		if isGenerated(obj) {
			k := objKey{obj.GetNamespace(), obj.GetLabel(v1alpha1.LabelGlance)}
			r.generatedBy[k] = append(r.generatedBy[k], obj)
			continue
		}
		r.userObjects[identity(obj.GetAPIVersion(), obj.GetKind(), obj.GetNamespace(), obj.GetName())] = true
		if isWorkloadKind(obj.GetAPIVersion(), obj.GetKind()) {
			r.workloads[obj.GetNamespace()] = append(r.workloads[obj.GetNamespace()], obj)
			continue
		}
		if k, ok := generatedKey(obj); ok {
			r.copies[k] = append(r.copies[k], obj)
			continue
		}
		if obj.GetAPIVersion() == "v1" && obj.GetKind() == "ConfigMap" {
			r.configMaps[objKey{obj.GetNamespace(), obj.GetName()}] = obj
		}
		if msg := kindProblem(obj); msg != "" {
			r.seen = true
			r.add(withTag(objectResult(obj, fn.Error, msg), tagRule, "kind"))
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
			broken = append(broken, obj)
			continue
		}
		if gk.Kind == v1alpha1.GlanceKind {
			g, errs, ok := decodeGlance(obj)
			if !ok {
				r.add(fieldResults(obj, errs)...)
				continue
			}
			errs = dedupe(append(errs, v1alpha1.ValidateGlance(g)...))
			key := objKey{g.Namespace, g.Name}
			if prev, dup := r.glances[key]; dup {
				prev.valid = false
				errs = append(errs, duplicate(v1alpha1.GlanceKind, g.Namespace, g.Name))
			}
			r.add(fieldResults(obj, errs)...)
			if _, dup := r.glances[key]; !dup {
				ge := &glanceEntry{obj: obj, g: g, valid: len(errs) == 0, names: append([]string{g.Name}, previousNames(obj)...)}
				r.glances[key] = ge
			}
			continue
		}
		b, errs, ok := decodeBackend(obj)
		if !ok {
			r.add(fieldResults(obj, errs)...)
			broken = append(broken, obj)
			continue
		}
		errs = dedupe(append(errs, v1alpha1.ValidateGlanceBackend(b)...))
		key := objKey{b.Namespace, b.Name}
		if prev, dup := seenBackends[key]; dup {
			// Two stores with one id: glance-api refuses the duplicate
			// section, so both are errors and their Glance is not rendered.
			prev.valid = false
			errs = append(errs, duplicate(v1alpha1.GlanceBackendKind, b.Namespace, b.Name))
		}
		r.add(fieldResults(obj, errs)...)
		be := &backendEntry{obj: obj, b: b, valid: len(errs) == 0}
		seenBackends[key] = be
		r.backends = append(r.backends, be)
	}
	for _, g := range r.glances {
		for _, n := range g.names {
			if _, taken := r.byName[objKey{g.g.Namespace, n}]; !taken || n == g.g.Name {
				r.byName[objKey{g.g.Namespace, n}] = g
			}
		}
	}
	// A backend that could not be decoded still names its Glance in most
	// cases: that Glance must not be reported rendered without it.
	for _, obj := range broken {
		if obj.GetKind() != v1alpha1.GlanceBackendKind {
			continue
		}
		ref, _, _ := obj.NestedString("spec", "glanceRef", "name")
		if g := r.byName[objKey{obj.GetNamespace(), ref}]; g != nil {
			g.broken = append(g.broken, obj.GetName())
		}
	}
	slices.SortFunc(r.backends, func(a, b *backendEntry) int {
		return cmp.Or(cmp.Compare(a.b.Namespace, b.b.Namespace), cmp.Compare(a.b.Name, b.b.Name))
	})
}

func duplicate(kind, ns, name string) *field.Error {
	return field.Duplicate(field.NewPath("metadata", "name"), fmt.Sprintf(
		"%s %s appears more than once in the input (a copied file not renamed?); each object identity may appear once", kind, nsName(ns, name)))
}

// attach groups backends by (namespace, spec.glanceRef.name). A backend
// whose Glance is not in this input is passed through: GitOps ordering may
// put the Glance in another build. A Glance that kustomize renamed earlier
// in this build (namePrefix, nameSuffix) is found by its old name, and the
// reference is updated to its new one, as kustomize's nameReference does.
func (r *invocation) attach() {
	for _, be := range r.backends {
		ref := be.b.Spec.GlanceRef.Name
		if ref == "" {
			continue
		}
		if g, ok := r.byName[objKey{be.b.Namespace, ref}]; ok {
			if ref != g.g.Name {
				be.b.Spec.GlanceRef.Name = g.g.Name
				if err := be.obj.SetNestedString(g.g.Name, "spec", "glanceRef", "name"); err != nil {
					r.add(objectResult(be.obj, fn.Error, err.Error()))
				}
			}
			g.backends = append(g.backends, be)
			continue
		}
		if len(r.glances) == 0 {
			r.add(withTag(objectResult(be.obj, fn.Info, fmt.Sprintf(
				"%s: %s: Glance %q is not in this input, so store %q is not rendered here; it is rendered by the build that holds the Glance",
				Name, v1alpha1.ReasonWaitingForParent, ref, be.b.Name)), tagReason, v1alpha1.ReasonWaitingForParent))
			continue
		}
		// Other Glances are here: a typo is likelier than a split build.
		r.add(withField(withTag(objectResult(be.obj, fn.Warning, fmt.Sprintf(
			"%s: %s: GlanceBackend %s names Glance %q, which is not in this input (Glances here: %s); store %q is not rendered. Fix spec.glanceRef.name if it is a typo; if the Glance is rendered by another build, ignore this",
			Name, v1alpha1.ReasonWaitingForParent, nsName(be.b.Namespace, be.b.Name), ref, r.glanceNames(), be.b.Name)),
			tagReason, v1alpha1.ReasonWaitingForParent), "spec.glanceRef.name"))
	}
}

func (r *invocation) glanceNames() string {
	var names []string
	for _, g := range r.sortedGlances() {
		names = append(names, nsName(g.g.Namespace, g.g.Name))
	}
	return strings.Join(names, ", ")
}

// claim gives each workload to the one Glance it belongs to: same
// namespace, and the Glance's name or a glance.openstack.c5c3.io/glance
// label naming it. A workload two Glances claim is wired by neither.
func (r *invocation) claim() {
	for ns, objs := range r.workloads {
		for _, obj := range objs {
			var owners []*glanceEntry
			if g := r.byName[objKey{ns, obj.GetName()}]; g != nil {
				owners = append(owners, g)
			}
			if l := obj.GetLabel(v1alpha1.LabelGlance); l != "" {
				if g := r.byName[objKey{ns, l}]; g != nil && !slices.Contains(owners, g) {
					owners = append(owners, g)
				}
			}
			switch len(owners) {
			case 1:
				owners[0].workloads = append(owners[0].workloads, obj)
			case 2:
				r.add(objectResult(obj, fn.Error, fmt.Sprintf(
					"%s: %s %s is claimed by two Glances: %q by its name and %q by its %s label; rename it or fix the label, so that it belongs to one",
					Name, obj.GetKind(), obj.GetName(), owners[0].g.Name, owners[1].g.Name, v1alpha1.LabelGlance)))
			}
		}
	}
}

func (r *invocation) sortedGlances() []*glanceEntry {
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
func (r *invocation) render(ge *glanceEntry) {
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
	labels := map[string]map[string]string{}
	for _, be := range ge.backends {
		labels[be.b.Name] = be.b.Labels
	}
	if msg := handWrittenDefault(g, backends, func(n string) map[string]string { return labels[n] }); msg != "" {
		r.add(withTag(objectResult(ge.obj, fn.Error, Name+": "+msg), tagRule, "controlplane-default"))
		valid = false
	}
	defaultStore, err := v1alpha1.DefaultBackend(nsName(g.Namespace, g.Name), backends)
	if err != nil {
		r.add(withTag(withTag(objectResult(ge.obj, fn.Error, err.Error()), tagReason, v1alpha1.ReasonNoDefaultBackend), tagRule, "exactly-one-default"))
		valid = false
	}
	if !r.checkRelease(ge) {
		valid = false
	}
	for _, name := range ge.broken {
		r.add(objectResult(ge.obj, fn.Error, fmt.Sprintf(
			"%s: GlanceBackend %s attached to Glance %s could not be read (see its errors); nothing is rendered without it", Name, name, g.Name)))
		valid = false
	}
	if !valid {
		r.info(ge.obj, fmt.Sprintf(msgNothingRendered, nsName(g.Namespace, g.Name)))
		return
	}

	policy, ferr := r.policyRules(ge)
	if ferr != nil {
		r.add(fieldResults(ge.obj, field.ErrorList{ferr})...)
		r.info(ge.obj, fmt.Sprintf(msgNothingRendered, nsName(g.Namespace, g.Name)))
		return
	}
	if !r.checkMetadef(ge, policy) {
		r.info(ge.obj, fmt.Sprintf(msgNothingRendered, nsName(g.Namespace, g.Name)))
		return
	}
	apis, errs := v1alpha1.ResolveAPIs(&g.Spec, stores, defaultStore, field.NewPath("spec", "apis"))
	if len(errs) > 0 {
		r.add(fieldResults(ge.obj, errs)...)
	}
	units, ok := r.assign(ge, apis)
	if len(errs) > 0 || !ok {
		r.info(ge.obj, fmt.Sprintf(msgNothingRendered, nsName(g.Namespace, g.Name)))
		return
	}
	for _, u := range units {
		if err := r.renderFiles(g, u, policy); err != nil {
			r.add(objectResult(ge.obj, fn.Error, err.Error()))
			return
		}
	}
	if u := g.Spec.APIServer; g.Spec.UsesUWSGI() && u != nil && u.UWSGI != nil && u.UWSGI.HTTPKeepAlive != nil && *u.UWSGI.HTTPKeepAlive {
		r.add(withField(objectResult(ge.obj, fn.Warning, fmt.Sprintf(
			"%s: spec.apiServer.uwsgi.httpKeepAlive: uWSGI 2.0's HTTP router closes a keep-alive connection after a request with a body, so a client's next request on that connection fails; glance-krm answers Connection: close unless this is true",
			Name)), "spec.apiServer.uwsgi.httpKeepAlive"))
	}
	if err := r.storeFiles(ge, units); err != nil {
		r.add(objectResult(ge.obj, fn.Error, err.Error()))
		return
	}
	r.retireGenerated(ge)
	var wired []string
	for _, u := range units {
		wired = append(wired, r.wireWorkloads(ge, u.w, u.workloads)...)
	}
	generated, err := r.generate(ge, units)
	if err != nil {
		r.add(objectResult(ge.obj, fn.Error, fmt.Sprintf("%s: generating the workload of Glance %s: %v", Name, g.Name, err)))
		return
	}
	if len(ge.workloads) == 0 && len(generated) == 0 {
		r.add(objectResult(ge.obj, fn.Warning, fmt.Sprintf(
			"%s: no Deployment or StatefulSet named %q or labelled %s=%s in namespace %q, and workload generation is off; the rendered Secrets and ConfigMaps are not mounted by anything",
			Name, g.Name, v1alpha1.LabelGlance, g.Name, g.Namespace)))
	}
	done := cmp.Or(strings.Join(wired, ", "), "no workload")
	if len(generated) > 0 {
		done += "; generated " + strings.Join(generated, ", ")
	}
	r.info(ge.obj, fmt.Sprintf("%s: rendered Glance %s: %s; wired %s", Name, nsName(g.Namespace, g.Name), summary(g, units), done))
}

// retireGenerated drops what earlier runs generated from this Glance
// (under any name it had): this run generates it again, or not at all.
func (r *invocation) retireGenerated(ge *glanceEntry) {
	for _, n := range ge.names {
		for _, o := range r.generatedBy[objKey{ge.g.Namespace, n}] {
			r.drop[o] = true
		}
	}
}

// wireWorkloads wires each Deployment or StatefulSet the Glance claims.
func (r *invocation) wireWorkloads(ge *glanceEntry, w wiring, workloads []*fn.KubeObject) []string {
	var wired []string
	for _, obj := range workloads {
		id := obj.GetKind() + " " + obj.GetName()
		rn := obj.MoveToResourceNode()
		warning, errs := w.wire(rn)
		*obj = *fn.MoveToKubeObject(rn)
		switch {
		case len(errs) > 0:
			for _, err := range errs {
				r.add(objectResult(obj, fn.Error, fmt.Sprintf("%s: not wiring %s: %v", Name, id, err)))
			}
		case warning != "":
			r.add(objectResult(obj, fn.Warning, fmt.Sprintf(
				"%s: %s belongs to Glance %q but was not wired: %s", Name, id, ge.g.Name, warning)))
		default:
			wired = append(wired, id)
			if from := envFromSources(obj); from != "" {
				r.add(objectResult(obj, fn.Warning, fmt.Sprintf(
					"%s: %s takes environment variables from %s into its glance-api container; glance-krm cannot see them at build time: make sure none is an OS_<SECTION>__<OPTION> variable, which would override the rendered files and credentials",
					Name, id, from)))
			}
		}
	}
	return wired
}

// copiesOf are the earlier generated copies of one Glance's component.
// Under kpt they are the package's history. Under kustomize they can only
// come from a base of this build that ran the function too: they are all
// dropped, so that no stale copy, renamed by the overlay or rendered from
// the base's view of the objects, ships unmounted.
func (r *invocation) copiesOf(ge *glanceEntry, component, kind string) fn.KubeObjects {
	g := ge.g
	if !r.stateless {
		return r.copies[copyKey{g.Namespace, g.Name, component, kind}]
	}
	for k, objs := range r.copies {
		if k.namespace != g.Namespace || k.component != component || k.kind != kind {
			continue
		}
		for _, o := range objs {
			if slices.Contains(ge.names, k.glance) || strings.HasPrefix(o.GetName(), g.Name+"-"+component+"-") {
				r.drop[o] = true
			}
		}
	}
	return nil
}
