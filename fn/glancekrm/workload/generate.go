package workload

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/c5c3/glance-krm/fn/glancekrm/render"
	"github.com/c5c3/glance-krm/fn/glancekrm/wire"
	"github.com/c5c3/glance-krm/fn/glancekrm/ynode"
	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

// IsGenerated tells an object an earlier run generated from a Glance.
// A drain record the render holds is one too: the render owns the object,
// its Job the data.
func IsGenerated(obj *fn.KubeObject) bool {
	switch obj.GetLabel(v1alpha1.LabelComponent) {
	case v1alpha1.ComponentWorkload:
		return obj.GetLabel(v1alpha1.LabelGlance) != ""
	case v1alpha1.ComponentDrainRecord:
		return obj.GetLabel(v1alpha1.LabelGlance) != "" && obj.GetLabel(v1alpha1.LabelManagedBy) == v1alpha1.ManagedByGlanceKRM
	}
	return false
}

// Identity names an object by group, kind, namespace and name.
func Identity(apiVersion, kind, ns, name string) string {
	group, _, _ := strings.Cut(apiVersion, "/")
	if !strings.Contains(apiVersion, "/") {
		group = ""
	}
	return group + "/" + kind + "/" + ns + "/" + name
}

// API is one Image API of a Glance as the generator sees it.
type API struct {
	Resolved v1alpha1.ResolvedAPI
	Wiring   wire.Wiring
	Egress   render.Egress
	// Served is true when a hand-written workload serves the API: nothing
	// is generated for it.
	Served bool
}

// Set is what Generate built for one Glance.
type Set struct {
	Objects fn.KubeObjects
	// UnknownEgress are the contacts of the rendered files that the
	// generated NetworkPolicy cannot admit by port.
	UnknownEgress []string
}

// Generate builds what the seed operator builds from a Glance, for the
// APIs no hand-written workload serves: each API's Deployment (wired like
// a hand-written one), PodDisruptionBudget and, with spec.autoscaling, its
// HorizontalPodAutoscaler, with spec.deployment.verticalAutoscaling its
// VerticalPodAutoscaler; with spec.apis, a Service per API. For the
// Glance: the stable Service selecting the catalog API, the db-sync Job
// (expand, migrate) and the db-contract Job after the Deployments,
// and the NetworkPolicy, HTTPRoute and db-purge CronJob when their
// fields are set; and a drain Job per store a backend's drain-to
// annotation retires (store_drain.go). A Glance whose every API is
// served by hand-written workloads generates nothing. Which of them the input already holds (and
// so keeps as written) is the caller's to decide.
func Generate(g *v1alpha1.Glance, apis []API, drains []v1alpha1.StoreDrain) (Set, error) {
	var pending []API
	for _, a := range apis {
		if !a.Served {
			pending = append(pending, a)
		}
	}
	if len(pending) == 0 {
		// Hand-written workloads serve every API; a drain is still ours.
		objs, err := StoreDrains(g, drains, apis)
		return Set{Objects: objs}, err
	}
	var gen generated
	gen.job(dbSyncJob(g), apis[0].Wiring)
	var deployments []string
	for _, a := range pending {
		spec := a.Resolved.GlanceAPISpec
		d := deployment(g, spec)
		deployments = append(deployments, d.Name)
		gen.add(a.Wiring.Deployment(d))
		gen.add(ynode.Object(pdb(g, spec)))
		if g.Spec.Autoscaling != nil {
			gen.add(ynode.Object(hpa(g, spec)))
		}
		if g.Spec.Deployment.VerticalAutoscaling != nil {
			gen.add(ynode.Object(vpa(g, spec)))
		}
		if len(g.Spec.APIs) > 0 {
			// Every API's own Service is <glance>-<api>, the default API's
			// too: <glance> is the stable one.
			gen.add(ynode.Object(service(g, g.Name+"-"+a.Resolved.Name, a.Resolved.Name, a.Resolved.Name)))
		}
		if g.Spec.NetworkPolicy != nil && a.Resolved.Name != v1alpha1.DefaultAPIName {
			gen.add(ynode.Object(networkPolicy(g, a.Resolved.Name, a.Egress, len(drains) > 0)))
		}
	}
	gen.job(dbContractJob(g, deployments), apis[0].Wiring)
	gen.storeDrains(g, drains, apis, deployments)
	gen.add(ynode.Object(service(g, g.Name, "", g.Spec.EffectiveCatalogAPI())))
	var set Set
	if g.Spec.NetworkPolicy != nil {
		var all []render.Egress
		for _, a := range apis {
			all = append(all, a.Egress)
		}
		e := render.Union(all...)
		gen.add(ynode.Object(networkPolicy(g, "", e, len(drains) > 0)))
		gen.add(ynode.Object(jobsNetworkPolicy(g)))
		set.UnknownEgress = e.Unknown
	}
	if g.Spec.Gateway != nil {
		gen.add(ynode.Object(httpRoute(g)))
	}
	if g.Spec.DBPurge != nil {
		gen.add(apis[0].Wiring.JobPod(ynode.Object(dbPurgeCronJob(g))))
	}
	set.Objects = gen.objs
	return set, gen.err
}

// generated collects one Glance's generated objects in order; the first
// error stops it.
type generated struct {
	objs fn.KubeObjects
	err  error
}

func (gen *generated) add(obj *fn.KubeObject, err error) {
	if gen.err != nil {
		return
	}
	if err == nil {
		err = setWave(obj)
	}
	if err == nil {
		// Flux's post-build substitution must not touch generated text
		// (a $ in a rendered file or a drain script).
		err = obj.SetAnnotation(v1alpha1.AnnotationFluxSubstitute, v1alpha1.FluxDisabled)
	}
	if err != nil {
		gen.err = err
		return
	}
	gen.objs = append(gen.objs, obj)
}

// job adds a wired glance-manage Job, named by its content: its template is
// immutable, and a new image, release or config must run it again. A name
// past a Job's 63 characters (<43-character glance>-db-contract-<hash>)
// is shortened (v1alpha1.JobName).
func (gen *generated) job(j any, w wire.Wiring) {
	obj, err := w.JobPod(ynode.Object(j))
	var hash string
	if err == nil {
		hash, err = specHash(obj)
	}
	if err == nil {
		err = obj.SetName(v1alpha1.JobName(obj.GetName(), hash))
	}
	gen.add(obj, err)
}

// specHash is 8 hex digits of a hash of an object's spec.
func specHash(obj *fn.KubeObject) (string, error) {
	spec, err := obj.CopyToResourceNode().Pipe(yaml.Lookup("spec"))
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(spec.MustString()))
	return hex.EncodeToString(sum[:])[:8], nil
}
