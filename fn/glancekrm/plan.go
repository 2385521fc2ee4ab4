package glancekrm

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/c5c3/glance-krm/fn/findings"
	"github.com/c5c3/glance-krm/fn/glancekrm/render"
	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

// plan is what one valid Glance renders: its merged policy overrides and,
// per Image API, the stores it serves and the hand-written workloads that
// serve it (none when the function generates its Deployment).
type plan struct {
	policy map[string]string
	apis   []*apiPlan
	drains []v1alpha1.StoreDrain
}

type apiPlan struct {
	api       v1alpha1.ResolvedAPI
	backends  []*v1alpha1.GlanceBackend
	workloads []*fn.KubeObject
}

// planGlance resolves the policy overrides and the APIs of a Glance the
// checks passed; ok is false when something refuses it.
func planGlance(inv *inventory, ge *glanceEntry) (p plan, results []findings.Finding, ok bool) {
	policy, ferr := policyRules(inv, ge)
	if ferr != nil {
		return plan{}, findings.Fields(ge.obj, "policy-overrides", field.ErrorList{ferr}), false
	}
	results, ok = checkMetadef(ge, policy)
	if !ok {
		return plan{}, results, false
	}
	defaultStore, _ := v1alpha1.DefaultBackend(ge.String(), ge.backendSpecs()) // checkExactlyOneDefault passed
	apis, errs := v1alpha1.ResolveAPIs(&ge.g.Spec, ge.storeNames(), defaultStore, field.NewPath("spec", "apis"))
	results = append(results, findings.Fields(ge.obj, "apis", errs)...)
	units, assigned := assign(ge, apis)
	results = append(results, assigned...)
	drains, refused := storeDrains(ge, apis)
	results = append(results, refused...)
	return plan{policy: policy, apis: units, drains: drains}, results, len(errs) == 0 && len(assigned) == 0 && len(refused) == 0
}

// storeDrains reads the backends' drain-to annotations (v1alpha1.StoreDrains);
// a refused one is an error on its GlanceBackend, at the annotation.
func storeDrains(ge *glanceEntry, apis []v1alpha1.ResolvedAPI) ([]v1alpha1.StoreDrain, []findings.Finding) {
	annotations := map[string]string{}
	for _, be := range ge.backends {
		annotations[be.b.Name] = be.b.Annotations[v1alpha1.AnnotationDrainTo]
	}
	drains, errs := v1alpha1.StoreDrains(ge.g.Name, annotations, apis)
	var results []findings.Finding
	for _, be := range ge.backends {
		if e := errs[be.b.Name]; e != nil {
			results = append(results, findings.Fields(be.obj, "store-drain", field.ErrorList{e})...)
		}
	}
	return drains, results
}

// assign gives each workload the Glance claims to one of its APIs: by its
// glance.openstack.c5c3.io/api label, else by its name (<glance>-<api>,
// or the Glance's own name for the API named "default"); without
// spec.apis every workload serves the one API. A workload that serves
// none is an error.
func assign(ge *glanceEntry, apis []v1alpha1.ResolvedAPI) ([]*apiPlan, []findings.Finding) {
	g := ge.g
	units := make([]*apiPlan, len(apis))
	byName := map[string]*apiPlan{}
	var names []string
	for i, a := range apis {
		u := &apiPlan{api: a}
		for _, be := range ge.backends {
			if slices.Contains(a.Stores, be.b.Name) {
				u.backends = append(u.backends, be.b)
			}
		}
		units[i], byName[a.Name] = u, u
		names = append(names, a.Name)
	}
	var results []findings.Finding
	for _, obj := range ge.workloads {
		u := byName[g.ServedAPI(obj.GetName(), obj.GetLabel(v1alpha1.LabelAPI))]
		if u == nil {
			results = append(results, findings.About(obj, findings.Error, "workload-api", fmt.Sprintf(
				"%s %s belongs to Glance %q but serves none of its APIs (%s): label it %s=<api>, or name it <glance>-<api>",
				obj.GetKind(), obj.GetName(), g.Name, strings.Join(names, ", "), v1alpha1.LabelAPI)))
			continue
		}
		u.workloads = append(u.workloads, obj)
	}
	return units, results
}

// renderedAPI is one API after the render stage.
type renderedAPI struct {
	*apiPlan
	files render.Files
}

// renderAPIs runs the render stage for every API of the plan.
func renderAPIs(g *v1alpha1.Glance, p plan) ([]renderedAPI, error) {
	out := make([]renderedAPI, len(p.apis))
	for i, u := range p.apis {
		files, err := render.API(g, u.backends, u.api.Default, p.policy)
		if err != nil {
			return nil, err
		}
		out[i] = renderedAPI{u, files}
	}
	return out, nil
}

// summary is the rendered line of one Glance: its stores and files, per
// API when it has several.
func summary(g *v1alpha1.Glance, apis []renderedAPI, names [][2]string) string {
	part := func(i int) string {
		return fmt.Sprintf("stores %s (default %s); Secret %s, ConfigMap %s",
			strings.Join(apis[i].api.Stores, ", "), apis[i].api.Default, names[i][0], names[i][1])
	}
	if len(g.Spec.APIs) == 0 {
		return part(0)
	}
	var parts []string
	for i, a := range apis {
		parts = append(parts, fmt.Sprintf("API %s: %s", a.api.Name, part(i)))
	}
	return strings.Join(parts, "; ") + "; catalog API " + g.Spec.EffectiveCatalogAPI()
}
