package glancekrm

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/c5c3/glance-krm/fn/findings"
	"github.com/c5c3/glance-krm/fn/glancekrm/decode"
	"github.com/c5c3/glance-krm/fn/glancekrm/history"
	"github.com/c5c3/glance-krm/fn/glancekrm/wire"
	"github.com/c5c3/glance-krm/fn/glancekrm/workload"
	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

// The inventory is the input sorted out once, in one pass, so that a large
// input costs linear time: every Glance and GlanceBackend decoded and
// judged alone, the backends attached to their Glance, the workloads
// claimed, and the earlier runs' objects indexed. It is read, never
// changed, by the per-Glance stages that follow.
type inventory struct {
	glances  []*glanceEntry          // sorted by namespace and name
	byName   map[objKey]*glanceEntry // every name a Glance was known by
	backends []*backendEntry         // sorted by namespace and name
	seen     bool                    // any object of our API group and kinds, of any version
	// stateless is true under kustomize (and so Argo CD): generated copies
	// in its input come from a base's render in the same build, never from
	// an earlier run, so they are replaced rather than kept as history.
	stateless   bool
	workloads   map[string][]*fn.KubeObject    // by namespace
	configMaps  map[objKey]*fn.KubeObject      // the input's own ConfigMaps
	copies      map[history.Key]fn.KubeObjects // earlier rendered copies
	generatedBy map[objKey]fn.KubeObjects      // what earlier runs generated, by Glance
	userObjects map[string]bool                // identities of the input's other objects
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

func (ge *glanceEntry) String() string { return v1alpha1.NamespacedName(ge.g.Namespace, ge.g.Name) }

// takeInventory decodes and validates every Glance and GlanceBackend,
// attaches the backends and gives each workload to its Glance.
func takeInventory(items fn.KubeObjects) (*inventory, []findings.Finding) {
	inv, results := collect(items)
	results = append(results, inv.attach()...)
	results = append(results, inv.claim()...)
	return inv, results
}

// collector is the state of one pass over the input: what collect has
// found so far.
type collector struct {
	inv          *inventory
	results      []findings.Finding
	glances      map[objKey]*glanceEntry
	seenBackends map[objKey]*backendEntry
	broken       []*fn.KubeObject
}

func collect(items fn.KubeObjects) (*inventory, []findings.Finding) {
	c := &collector{
		inv: &inventory{
			byName: map[objKey]*glanceEntry{}, workloads: map[string][]*fn.KubeObject{},
			configMaps: map[objKey]*fn.KubeObject{}, copies: map[history.Key]fn.KubeObjects{},
			generatedBy: map[objKey]fn.KubeObjects{}, userObjects: map[string]bool{},
		},
		glances: map[objKey]*glanceEntry{}, seenBackends: map[objKey]*backendEntry{},
	}
	for _, obj := range items {
		c.add(obj)
	}
	c.index()
	return c.inv, c.results
}

// add files one input object: a generated object by its Glance, a
// workload by its namespace, a rendered copy by its key, and a Glance or
// GlanceBackend decoded and validated.
func (c *collector) add(obj *fn.KubeObject) {
	inv := c.inv
	if obj.GetAnnotation(decode.AnnotationKustomizeID) != "" {
		inv.stateless = true
	}
	if workload.IsGenerated(obj) {
		k := objKey{obj.GetNamespace(), obj.GetLabel(v1alpha1.LabelGlance)}
		inv.generatedBy[k] = append(inv.generatedBy[k], obj)
		return
	}
	inv.userObjects[workload.Identity(obj.GetAPIVersion(), obj.GetKind(), obj.GetNamespace(), obj.GetName())] = true
	if wire.IsWorkloadKind(obj.GetAPIVersion(), obj.GetKind()) {
		inv.workloads[obj.GetNamespace()] = append(inv.workloads[obj.GetNamespace()], obj)
		return
	}
	if k, ok := history.KeyOf(obj); ok {
		inv.copies[k] = append(inv.copies[k], obj)
		return
	}
	if obj.GetAPIVersion() == "v1" && obj.GetKind() == "ConfigMap" {
		inv.configMaps[objKey{obj.GetNamespace(), obj.GetName()}] = obj
	}
	if msg := decode.KindProblem(obj); msg != "" {
		inv.seen = true
		c.results = append(c.results, findings.About(obj, findings.Error, "kind", msg))
		return
	}
	gk := obj.GroupKind()
	if gk.Group != v1alpha1.Group || (gk.Kind != v1alpha1.GlanceKind && gk.Kind != v1alpha1.GlanceBackendKind) {
		return
	}
	inv.seen = true
	if v := obj.GroupVersionKind().Version; v != v1alpha1.Version {
		c.results = append(c.results, findings.About(obj, findings.Error, "apiVersion", fmt.Sprintf(
			"apiVersion %s is not served by %s; use %s", obj.GetAPIVersion(), Name, v1alpha1.APIVersion)))
		c.broken = append(c.broken, obj)
		return
	}
	if gk.Kind == v1alpha1.GlanceKind {
		c.addGlance(obj)
		return
	}
	c.addBackend(obj)
}

func (c *collector) addGlance(obj *fn.KubeObject) {
	g, errs, ok := decode.Glance(obj)
	if !ok {
		c.results = append(c.results, findings.Fields(obj, ruleSchema, errs)...)
		return
	}
	errs = decode.Dedupe(append(errs, v1alpha1.ValidateGlance(g)...))
	key := objKey{g.Namespace, g.Name}
	prev, dup := c.glances[key]
	if dup {
		prev.valid = false
		errs = append(errs, duplicate(v1alpha1.GlanceKind, g.Namespace, g.Name))
	}
	c.results = append(c.results, findings.Fields(obj, ruleSchema, errs)...)
	if !dup {
		c.glances[key] = &glanceEntry{obj: obj, g: g, valid: len(errs) == 0, names: append([]string{g.Name}, decode.PreviousNames(obj)...)}
	}
}

func (c *collector) addBackend(obj *fn.KubeObject) {
	b, errs, ok := decode.Backend(obj)
	if !ok {
		c.results = append(c.results, findings.Fields(obj, ruleSchema, errs)...)
		c.broken = append(c.broken, obj)
		return
	}
	errs = decode.Dedupe(append(errs, v1alpha1.ValidateGlanceBackend(b)...))
	key := objKey{b.Namespace, b.Name}
	if prev, dup := c.seenBackends[key]; dup {
		// Two stores with one id: glance-api refuses the duplicate
		// section, so both are errors and their Glance is not rendered.
		prev.valid = false
		errs = append(errs, duplicate(v1alpha1.GlanceBackendKind, b.Namespace, b.Name))
	}
	c.results = append(c.results, findings.Fields(obj, ruleSchema, errs)...)
	be := &backendEntry{obj: obj, b: b, valid: len(errs) == 0}
	c.seenBackends[key] = be
	c.inv.backends = append(c.inv.backends, be)
}

// index orders what was collected and finds each Glance by its names;
// a backend that could not be decoded still names its Glance in most
// cases: that Glance must not be reported rendered without it.
func (c *collector) index() {
	inv := c.inv
	for _, g := range c.glances {
		inv.glances = append(inv.glances, g)
		for _, n := range g.names {
			if _, taken := inv.byName[objKey{g.g.Namespace, n}]; !taken || n == g.g.Name {
				inv.byName[objKey{g.g.Namespace, n}] = g
			}
		}
	}
	slices.SortFunc(inv.glances, func(a, b *glanceEntry) int {
		return cmp.Or(cmp.Compare(a.g.Namespace, b.g.Namespace), cmp.Compare(a.g.Name, b.g.Name))
	})
	for _, obj := range c.broken {
		if obj.GetKind() != v1alpha1.GlanceBackendKind {
			continue
		}
		ref, _, _ := obj.NestedString("spec", "glanceRef", "name")
		if g := inv.byName[objKey{obj.GetNamespace(), ref}]; g != nil {
			g.broken = append(g.broken, obj.GetName())
		}
	}
	slices.SortFunc(inv.backends, func(a, b *backendEntry) int {
		return cmp.Or(cmp.Compare(a.b.Namespace, b.b.Namespace), cmp.Compare(a.b.Name, b.b.Name))
	})
}

// ruleSchema is the rule of what decoding and the API server's validation
// find in one object.
const ruleSchema = "schema"

func duplicate(kind, ns, name string) *field.Error {
	return field.Duplicate(field.NewPath("metadata", "name"), fmt.Sprintf(
		"%s %s appears more than once in the input (a copied file not renamed?); each object identity may appear once", kind, v1alpha1.NamespacedName(ns, name)))
}

// attach groups backends by (namespace, spec.glanceRef.name). A backend
// whose Glance is not in this input is passed through: GitOps ordering may
// put the Glance in another build. A Glance that kustomize renamed earlier
// in this build (namePrefix, nameSuffix) is found by its old name, and the
// reference is updated to its new one, as kustomize's nameReference does.
func (inv *inventory) attach() []findings.Finding {
	var results []findings.Finding
	for _, be := range inv.backends {
		ref := be.b.Spec.GlanceRef.Name
		if ref == "" {
			continue
		}
		if g, ok := inv.byName[objKey{be.b.Namespace, ref}]; ok {
			if ref != g.g.Name {
				be.b.Spec.GlanceRef.Name = g.g.Name
				if err := be.obj.SetNestedString(g.g.Name, "spec", "glanceRef", "name"); err != nil {
					results = append(results, findings.About(be.obj, findings.Error, "glance-ref", err.Error()))
				}
			}
			g.backends = append(g.backends, be)
			continue
		}
		if len(inv.glances) == 0 {
			results = append(results, findings.About(be.obj, findings.Note, ruleWaiting, fmt.Sprintf(
				"%s: Glance %q is not in this input, so store %q is not rendered here; it is rendered by the build that holds the Glance",
				v1alpha1.ReasonWaitingForParent, ref, be.b.Name)).Because(v1alpha1.ReasonWaitingForParent))
			continue
		}
		// Other Glances are here: a typo is likelier than a split build.
		var names []string
		for _, g := range inv.glances {
			names = append(names, g.String())
		}
		results = append(results, findings.About(be.obj, findings.Warning, ruleWaiting, fmt.Sprintf(
			"%s: GlanceBackend %s names Glance %q, which is not in this input (Glances here: %s); store %q is not rendered. Fix spec.glanceRef.name if it is a typo; if the Glance is rendered by another build, ignore this",
			v1alpha1.ReasonWaitingForParent, v1alpha1.NamespacedName(be.b.Namespace, be.b.Name), ref, strings.Join(names, ", "), be.b.Name)).
			Because(v1alpha1.ReasonWaitingForParent).At("spec.glanceRef.name"))
	}
	return results
}

// ruleWaiting is the rule of a GlanceBackend whose Glance is not here.
const ruleWaiting = "waiting-for-parent"

// claim gives each workload to the one Glance it belongs to: same
// namespace, and the Glance's name or a glance.openstack.c5c3.io/glance
// label naming it. A workload two Glances claim is wired by neither.
func (inv *inventory) claim() []findings.Finding {
	var results []findings.Finding
	for ns, objs := range inv.workloads {
		for _, obj := range objs {
			var owners []*glanceEntry
			if g := inv.byName[objKey{ns, obj.GetName()}]; g != nil {
				owners = append(owners, g)
			}
			if l := obj.GetLabel(v1alpha1.LabelGlance); l != "" {
				if g := inv.byName[objKey{ns, l}]; g != nil && !slices.Contains(owners, g) {
					owners = append(owners, g)
				}
			}
			switch len(owners) {
			case 0:
				if wire.RunsGlanceAPI(obj) {
					results = append(results, inv.unclaimed(obj))
				}
			case 1:
				owners[0].workloads = append(owners[0].workloads, obj)
			case 2:
				results = append(results, findings.About(obj, findings.Error, "workload-claimed-twice", fmt.Sprintf(
					"%s %s is claimed by two Glances: %q by its name and %q by its %s label; rename it or fix the label, so that it belongs to one",
					obj.GetKind(), obj.GetName(), owners[0].g.Name, owners[1].g.Name, v1alpha1.LabelGlance)))
			}
		}
	}
	return results
}

// unclaimed warns about a glance-api workload no Glance of the input
// claims: it would ship as written, without the rendered files or its
// credentials (a ControlPlane deleted by a patch in the same
// kustomization, which kustomize applies before the function runs, is
// one way to get there).
func (inv *inventory) unclaimed(obj *fn.KubeObject) findings.Finding {
	here := "there is no Glance in this input"
	if len(inv.glances) > 0 {
		var names []string
		for _, g := range inv.glances {
			names = append(names, g.String())
		}
		here = "Glances here: " + strings.Join(names, ", ")
	}
	return findings.About(obj, findings.Warning, "workload-unclaimed", fmt.Sprintf(
		"%s %s runs glance-api, but no Glance of this input claims it by its name or its %s label (%s): it ships unwired, without the rendered config and credentials. Add its Glance to this build, or name or label the workload after its Glance",
		obj.GetKind(), v1alpha1.NamespacedName(obj.GetNamespace(), obj.GetName()), v1alpha1.LabelGlance, here))
}

// copiesOf are the earlier rendered copies of one Glance's component, and
// the copies to drop. Under kpt they are the package's history. Under
// kustomize they can only come from a base of this build that ran the
// function too: they are all dropped, so that no stale copy, renamed by
// the overlay or rendered from the base's view of the objects, ships
// unmounted.
func (inv *inventory) copiesOf(ge *glanceEntry, component, kind string) (copies, drop fn.KubeObjects) {
	g := ge.g
	if !inv.stateless {
		return inv.copies[history.Key{Namespace: g.Namespace, Glance: g.Name, Component: component, Kind: kind}], nil
	}
	for k, objs := range inv.copies {
		if k.Namespace != g.Namespace || k.Component != component || k.Kind != kind {
			continue
		}
		for _, o := range objs {
			if slices.Contains(ge.names, k.Glance) || strings.HasPrefix(o.GetName(), g.Name+"-"+component+"-") {
				drop = append(drop, o)
			}
		}
	}
	return nil, drop
}

// generatedFrom is what earlier runs generated from this Glance, under
// any name it had: this run generates it again, or not at all.
func (inv *inventory) generatedFrom(ge *glanceEntry) fn.KubeObjects {
	var out fn.KubeObjects
	for _, n := range ge.names {
		out = append(out, inv.generatedBy[objKey{ge.g.Namespace, n}]...)
	}
	return out
}
