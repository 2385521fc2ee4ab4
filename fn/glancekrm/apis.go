package glancekrm

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

// apiUnit is one Image API of a Glance as the function renders it: its
// stores, its rendered files, and the hand-written workloads that serve
// it (none when the function generates its Deployment).
type apiUnit struct {
	api       v1alpha1.ResolvedAPI
	backends  []*v1alpha1.GlanceBackend
	files     [2]rendered // backends Secret, config ConfigMap
	egress    egress      // what its files make glance-api contact
	w         wiring
	workloads []*fn.KubeObject
}

// assign gives each workload the Glance claims to one of its APIs: by its
// glance.openstack.c5c3.io/api label, else by its name (<glance>-<api>,
// or the Glance's own name for the API named "default"); without
// spec.apis every workload serves the one API.
func (r *invocation) assign(ge *glanceEntry, apis []v1alpha1.ResolvedAPI) ([]*apiUnit, bool) {
	g := ge.g
	units := make([]*apiUnit, len(apis))
	byName := map[string]*apiUnit{}
	var names []string
	for i, a := range apis {
		u := &apiUnit{api: a}
		for _, be := range ge.backends {
			if slices.Contains(a.Stores, be.b.Name) {
				u.backends = append(u.backends, be.b)
			}
		}
		units[i], byName[a.Name] = u, u
		names = append(names, a.Name)
	}
	ok := true
	for _, obj := range ge.workloads {
		u := byName[g.ServedAPI(obj.GetName(), obj.GetLabel(v1alpha1.LabelAPI))]
		if u == nil {
			r.add(objectResult(obj, fn.Error, fmt.Sprintf(
				"%s: %s %s belongs to Glance %q but serves none of its APIs (%s): label it %s=<api>, or name it <glance>-<api>",
				Name, obj.GetKind(), obj.GetName(), g.Name, strings.Join(names, ", "), v1alpha1.LabelAPI)))
			ok = false
			continue
		}
		u.workloads = append(u.workloads, obj)
	}
	return units, ok
}

// renderFiles renders one API's backends.conf and config files.
func (r *invocation) renderFiles(g *v1alpha1.Glance, u *apiUnit, policy map[string]string) error {
	backendsINI, apiINI := renderBackendsConf(g, u.backends), renderAPIConf(g, u.backends, u.api.Default, len(policy) > 0)
	backendsConf, err := backendsINI.String()
	if err != nil {
		return fmt.Errorf("rendering backends.conf: %w", err)
	}
	apiConf, err := apiINI.String()
	if err != nil {
		return fmt.Errorf("rendering glance-api.conf: %w", err)
	}
	configData, err := configFiles(&g.Spec, apiConf, policy)
	if err != nil {
		return err
	}
	u.egress = egressOf(&g.Spec, backendsINI, apiINI)
	u.files = [2]rendered{
		{g, v1alpha1.ComponentBackends, map[string]string{v1alpha1.KeyBackendsConf: backendsConf}},
		{g, v1alpha1.ComponentConfig, configData},
	}
	u.w = wiring{glance: g, backends: u.backends, credentialsImage: r.config.credentialsImage, rendered: renderedEnv(backendsINI, apiINI),
		backendsSec: u.files[0].name(), configMap: u.files[1].name()}
	maps.Copy(u.w.rendered, u.w.credentialOptions())
	return nil
}

// storeFiles adds each distinct rendered file of the Glance's APIs
// (APIs that read the same files share them) and retires earlier copies.
func (r *invocation) storeFiles(ge *glanceEntry, units []*apiUnit) error {
	mounted := map[string]bool{}
	for _, objs := range [][]*fn.KubeObject{ge.workloads, r.generatedBy[objKey{ge.g.Namespace, ge.g.Name}]} {
		for _, o := range objs {
			mountedNames(o.CopyToResourceNode().YNode(), false, mounted)
		}
	}
	for i := range 2 {
		var rs []rendered
		for _, u := range units {
			rs = append(rs, u.files[i])
		}
		objs, drop, err := upsertGenerated(r.copiesOf(ge, rs[0].component, rs[0].kind()), rs, mounted)
		if err != nil {
			return err
		}
		r.added = append(r.added, objs...)
		for _, d := range drop {
			r.drop[d] = true
		}
	}
	return nil
}

// summary is the rendered line of one Glance: its stores and files, per
// API when it has several.
func summary(g *v1alpha1.Glance, units []*apiUnit) string {
	part := func(u *apiUnit) string {
		return fmt.Sprintf("stores %s (default %s); Secret %s, ConfigMap %s",
			strings.Join(u.api.Stores, ", "), u.api.Default, u.w.backendsSec, u.w.configMap)
	}
	if len(g.Spec.APIs) == 0 {
		return part(units[0])
	}
	var parts []string
	for _, u := range units {
		parts = append(parts, fmt.Sprintf("API %s: %s", u.api.Name, part(u)))
	}
	return strings.Join(parts, "; ") + "; catalog API " + g.Spec.EffectiveCatalogAPI()
}

// mountedNames collects the ConfigMap and Secret names a workload's
// volumes name (configMap.name, secret.name, secret.secretName, in
// projected volumes too), wherever its pod template is.
func mountedNames(n *yaml.Node, inVolumeSource bool, out map[string]bool) {
	if n == nil {
		return
	}
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i].Value, n.Content[i+1]
			if inVolumeSource && (k == "name" || k == "secretName") && v.Kind == yaml.ScalarNode {
				out[v.Value] = true
			}
			mountedNames(v, k == "configMap" || k == "secret", out)
		}
		return
	}
	for _, c := range n.Content {
		mountedNames(c, false, out)
	}
}
