package glancekrm

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

// isGenerated tells an object an earlier run generated from a Glance.
// errNoContainers: a generated pod template always has its containers;
// this names the object if one did not.
const errNoContainers = "%s %s has no containers"

func isGenerated(obj *fn.KubeObject) bool {
	return obj.GetLabel(v1alpha1.LabelComponent) == v1alpha1.ComponentWorkload && obj.GetLabel(v1alpha1.LabelGlance) != ""
}

// identity names an object by group, kind, namespace and name.
func identity(apiVersion, kind, ns, name string) string {
	group, _, _ := strings.Cut(apiVersion, "/")
	if !strings.Contains(apiVersion, "/") {
		group = ""
	}
	return group + "/" + kind + "/" + ns + "/" + name
}

// generate builds what the seed operator builds from a Glance, for the
// APIs no hand-written workload serves: each API's Deployment (wired like
// a hand-written one), PodDisruptionBudget and, with spec.autoscaling, its
// HorizontalPodAutoscaler; with spec.apis, a Service per API. For the
// Glance: the stable Service selecting the catalog API, the db-sync Job,
// and the NetworkPolicy, HTTPRoute and db-purge CronJob when their
// fields are set. An object the input already holds (same kind, namespace
// and name) is the user's and is not generated. A Glance whose every API
// is served by hand-written workloads generates nothing, as before.
func (r *invocation) generate(ge *glanceEntry, units []*apiUnit) ([]string, error) {
	g := ge.g
	var pending []*apiUnit
	for _, u := range units {
		if len(u.workloads) == 0 {
			pending = append(pending, u)
		}
	}
	if !r.config.generate || len(pending) == 0 {
		return nil, nil
	}
	gen := &generated{r: r, g: g}
	gen.job(dbSyncJob(g), units[0].w)
	for _, u := range pending {
		gen.add(u.w.wireDeployment(deployment(g, u.api.GlanceAPISpec)))
		gen.add(toKubeObject(pdb(g, u.api.GlanceAPISpec)))
		if g.Spec.Autoscaling != nil {
			gen.add(toKubeObject(hpa(g, u.api.GlanceAPISpec)))
		}
		if len(g.Spec.APIs) > 0 {
			// Every API's own Service is <glance>-<api>, the default API's
			// too: <glance> is the stable one.
			gen.add(toKubeObject(service(g, g.Name+"-"+u.api.Name, u.api.Name, u.api.Name)))
		}
		if g.Spec.NetworkPolicy != nil && u.api.Name != v1alpha1.DefaultAPIName {
			gen.add(toKubeObject(networkPolicy(g, u.api.Name, u.egress)))
		}
	}
	gen.add(toKubeObject(service(g, g.Name, "", g.Spec.EffectiveCatalogAPI())))
	if g.Spec.NetworkPolicy != nil {
		var all []egress
		for _, u := range units {
			all = append(all, u.egress)
		}
		e := union(all...)
		gen.add(toKubeObject(networkPolicy(g, "", e)))
		gen.add(toKubeObject(jobsNetworkPolicy(g)))
		if len(e.unknown) > 0 && len(g.Spec.NetworkPolicy.AdditionalEgress) == 0 {
			r.add(withField(objectResult(ge.obj, fn.Warning, fmt.Sprintf(
				"%s: %s: the generated NetworkPolicy admits by port what the rendered files name, but glance-api also contacts %s: admit it with spec.networkPolicy.additionalEgress",
				Name, v1alpha1.ReasonEgressNotRendered, strings.Join(e.unknown, "; "))), "spec.networkPolicy.additionalEgress"))
		}
	}
	if g.Spec.Gateway != nil {
		gen.add(toKubeObject(httpRoute(g)))
	}
	if g.Spec.DBPurge != nil {
		gen.add(units[0].w.wireJobPod(toKubeObject(dbPurgeCronJob(g))))
	}
	return gen.names, gen.err
}

// generated collects one Glance's generated objects in order.
type generated struct {
	r     *invocation
	g     *v1alpha1.Glance
	names []string
	err   error
}

func (gen *generated) add(obj *fn.KubeObject, err error) {
	if gen.err != nil {
		return
	}
	if err != nil {
		gen.err = err
		return
	}
	id := identity(obj.GetAPIVersion(), obj.GetKind(), obj.GetNamespace(), obj.GetName())
	if gen.r.userObjects[id] {
		gen.r.info(obj, fmt.Sprintf("%s: the input holds %s %s: it is kept as written and not generated from Glance %s",
			Name, obj.GetKind(), obj.GetName(), gen.g.Name))
		return
	}
	if err := obj.SetAnnotation(v1alpha1.AnnotationFluxSubstitute, v1alpha1.FluxDisabled); err != nil {
		gen.err = err
		return
	}
	gen.r.added = append(gen.r.added, obj)
	gen.names = append(gen.names, obj.GetKind()+" "+obj.GetName())
}

// job adds the wired db-sync Job, named by its content: its template is
// immutable, and a new image, release or config must run it again.
func (gen *generated) job(j any, w wiring) {
	obj, err := w.wireJobPod(toKubeObject(j))
	if err == nil {
		var spec *yaml.RNode
		if spec, err = obj.CopyToResourceNode().Pipe(yaml.Lookup("spec")); err == nil {
			sum := sha256.Sum256([]byte(spec.MustString()))
			err = obj.SetName(obj.GetName() + "-" + hex.EncodeToString(sum[:])[:8])
		}
	}
	gen.add(obj, err)
}

// wireDeployment wires a generated Deployment exactly as a hand-written
// one.
func (w wiring) wireDeployment(d any) (*fn.KubeObject, error) {
	obj, err := toKubeObject(d)
	if err != nil {
		return nil, err
	}
	name := obj.GetName()
	rn := obj.MoveToResourceNode()
	why, errs := w.wire(rn)
	if len(errs) > 0 || why != "" {
		return nil, fmt.Errorf("wiring the generated Deployment %s: %v %s", name, errs, why)
	}
	return fn.MoveToKubeObject(rn), nil
}

// wireJobPod gives a generated Job's or CronJob's pod the config volume,
// the credentials volumes and the credentials init container, mounted
// into its one container as into glance-api.
func (w wiring) wireJobPod(obj *fn.KubeObject, err error) (*fn.KubeObject, error) {
	if err != nil {
		return nil, err
	}
	kind, name := obj.GetKind(), obj.GetName()
	rn := obj.MoveToResourceNode()
	path := []string{"spec", "template", "spec"}
	if kind == "CronJob" {
		path = []string{"spec", "jobTemplate", "spec", "template", "spec"}
	}
	pod, err := rn.Pipe(yaml.Lookup(path...))
	if err != nil {
		return nil, err
	}
	list, err := pod.Pipe(yaml.Lookup("containers"))
	if err != nil || list == nil {
		return nil, fmt.Errorf(errNoContainers, kind, name)
	}
	cs, err := list.Elements()
	if err != nil || len(cs) == 0 {
		return nil, fmt.Errorf(errNoContainers, kind, name)
	}
	c := cs[0]
	if err := w.setVolumes(pod, nil); err != nil {
		return nil, err
	}
	if err := setInitContainer(pod, w.initContainer(w.credentialsImage)); err != nil {
		return nil, err
	}
	if err := setMounts(c, nil, configDirs); err != nil {
		return nil, err
	}
	return fn.MoveToKubeObject(rn), nil
}
