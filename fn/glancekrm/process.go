// Package glancekrm is the glance-krm KRM function: it validates Glance and
// GlanceBackend objects, renders each Glance's backends.conf and
// glance-api.conf into content-hashed immutable objects, and wires the
// Glance workloads to them and to their credentials.
//
// Process is the pipeline, one stage per package: the function's
// configuration, the ControlPlane projection (controlplane), the inventory
// (decode), then for each Glance the check chain and its plan, the files
// (render), their copies and revisions (history), the workloads wired
// (wire) and generated (workload). Stages hand values on and return
// errors; only this package turns them into results.
package glancekrm

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/kptdev/krm-functions-sdk/go/fn"

	"github.com/c5c3/glance-krm/fn/findings"
	"github.com/c5c3/glance-krm/fn/glancekrm/controlplane"
	"github.com/c5c3/glance-krm/fn/glancekrm/history"
	"github.com/c5c3/glance-krm/fn/glancekrm/wire"
	"github.com/c5c3/glance-krm/fn/glancekrm/workload"
	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

// Name is how the function names itself in its results, so that a run that
// silently did not happen (kustomize skips exec functions without
// --enable-exec) is noticeable by the absence of these lines.
const Name = "glance-krm"

// msgNothingRendered is the summary of a Glance the run refused.
const msgNothingRendered = "nothing rendered for Glance %s: fix the errors reported above"

// Process is the function: it edits rl.Items and appends its results. It
// reports failure (and the binary exits non-zero) when any result is an
// error, because kustomize and kpt judge a function by its exit code.
func Process(rl *fn.ResourceList) (bool, error) {
	cfg, results := readConfig(rl.FunctionConfig)
	if findings.HasErrors(results) {
		// A setting the function cannot read is a setting lost: nothing
		// is rendered or wired with the rest of them.
		results = append(results, findings.General(findings.Note, ruleConfig, "nothing rendered: fix the functionConfig errors reported above"))
		return false, report(rl, results)
	}
	items, projected := projectControlPlanes(rl.Items)
	results = append(results, projected...)
	inv, found := takeInventory(items)
	results = append(results, found...)
	results = append(results, kustomizeImages(inv, &cfg)...)
	var added fn.KubeObjects
	drop := map[*fn.KubeObject]bool{}
	outs := make([]output, len(inv.glances))
	for i, ge := range inv.glances {
		outs[i] = renderGlance(cfg, inv, ge)
		results = append(results, outs[i].results...)
		added = append(added, outs[i].added...)
		for _, o := range outs[i].drop {
			drop[o] = true
		}
	}
	results = append(results, clashes(inv.glances, outs)...)
	if !findings.HasErrors(results) {
		results = append(results, lastWave(inv)...)
	}
	if !inv.seen {
		results = append(results, findings.General(findings.Note, ruleSummary, "no Glance or GlanceBackend in the input; nothing to render"))
	}
	rl.Items = append(slices.DeleteFunc(items, func(o *fn.KubeObject) bool { return drop[o] }), added...)
	return !findings.HasErrors(results), report(rl, results)
}

// ruleSummary is the rule of what a run says it did.
const ruleSummary = "summary"

// report hands the findings to the one writer of results
// (findings.Results); a finding it cannot write is the function's defect.
func report(rl *fn.ResourceList, fs []findings.Finding) error {
	rs, err := findings.Results(fs)
	if err != nil {
		return fmt.Errorf("%s: %w", Name, err)
	}
	rl.Results = append(rl.Results, rs...)
	return nil
}

// projectControlPlanes replaces the children earlier runs projected with
// the ones the ControlPlanes in the input declare now, so that a child
// removed from a ControlPlane disappears from the output.
func projectControlPlanes(items fn.KubeObjects) (fn.KubeObjects, []findings.Finding) {
	var cps []*fn.KubeObject
	for _, o := range items {
		if controlplane.IsControlPlane(o) {
			cps = append(cps, o)
		}
	}
	if len(cps) == 0 {
		return items, nil
	}
	items = slices.DeleteFunc(items, controlplane.IsProjected)
	var results []findings.Finding
	for _, o := range cps {
		children, errs := controlplane.Project(o)
		if len(errs) > 0 {
			results = append(results, findings.Fields(o, ruleControlPlane, errs)...)
			continue
		}
		items = append(items, children...)
		names := make([]string, len(children))
		for i, c := range children {
			names[i] = c.GetKind() + " " + c.GetName()
		}
		results = append(results, findings.About(o, findings.Note, ruleControlPlane, fmt.Sprintf("ControlPlane %s projects %s",
			v1alpha1.NamespacedName(o.GetNamespace(), o.GetName()), strings.Join(names, ", "))))
	}
	return items, results
}

// ruleControlPlane is the rule of the ControlPlane projection's findings.
const ruleControlPlane = "controlplane"

// output is what one Glance adds to the ResourceList: objects to append,
// items to drop, and results.
type output struct {
	added   fn.KubeObjects
	drop    fn.KubeObjects
	results []findings.Finding
}

func (o *output) report(rs ...findings.Finding) { o.results = append(o.results, rs...) }

func (o *output) refuse(ge *glanceEntry) output {
	o.report(findings.About(ge.obj, findings.Note, ruleSummary, fmt.Sprintf(msgNothingRendered, ge)))
	return *o
}

// renderGlance is one Glance through the stages. Nothing is rendered for a
// Glance with any error: the build fails and the last-good objects stay
// live.
func renderGlance(cfg config, inv *inventory, ge *glanceEntry) output {
	var out output
	g := ge.g
	p, judged, ok := judge(inv, ge)
	out.report(judged...)
	if !ok {
		return out.refuse(ge)
	}
	if cfg.images != nil {
		followed := followImages(cfg, ge)
		out.report(followed...)
		if findings.HasErrors(followed) {
			return out.refuse(ge)
		}
	}
	apis, err := renderAPIs(g, p)
	if err != nil {
		out.report(findings.About(ge.obj, findings.Error, "render", err.Error()))
		return out
	}
	if u := g.Spec.APIServer; g.Spec.UsesUWSGI() && u != nil && u.UWSGI != nil && u.UWSGI.HTTPKeepAlive != nil && *u.UWSGI.HTTPKeepAlive {
		out.report(findings.About(ge.obj, findings.Warning, "uwsgi-keepalive",
			"spec.apiServer.uwsgi.httpKeepAlive: uWSGI 2.0's HTTP router closes a keep-alive connection after a request with a body, so a client's next request on that connection fails; glance-krm answers Connection: close unless this is true").
			At("spec.apiServer.uwsgi.httpKeepAlive"))
	}

	names, kept, err := keepCopies(inv, ge, apis)
	if err != nil {
		out.report(findings.About(ge.obj, findings.Error, "history", err.Error()))
		return out
	}
	out.added, out.drop = kept.added, kept.drop
	out.drop = append(out.drop, inv.generatedFrom(ge)...)

	wirings := make([]wire.Wiring, len(apis))
	var wired []string
	for i, a := range apis {
		wirings[i] = wire.Wiring{Glance: g, Backends: a.backends, CredentialsImage: cfg.credentialsImage,
			BackendsSecret: names[i][0], ConfigMap: names[i][1], Options: a.files.Options}
		w, rs := wireWorkloads(ge, wirings[i], a.workloads)
		wired = append(wired, w...)
		out.report(rs...)
	}

	generated, ok := generateFor(cfg, inv, ge, p, apis, wirings, &out)
	if !ok {
		return out
	}
	if len(ge.workloads) == 0 && len(generated) == 0 {
		out.report(findings.About(ge.obj, findings.Warning, "no-workload", fmt.Sprintf(
			"no Deployment or StatefulSet named %q or labelled %s=%s in namespace %q, and workload generation is off; the rendered Secrets and ConfigMaps are not mounted by anything",
			g.Name, v1alpha1.LabelGlance, g.Name, g.Namespace)))
	}
	done := cmp.Or(strings.Join(wired, ", "), "no workload")
	if len(generated) > 0 {
		done += "; generated " + strings.Join(generated, ", ")
	}
	out.report(findings.About(ge.obj, findings.Note, ruleSummary, fmt.Sprintf("rendered Glance %s: %s; wired %s", ge, summary(g, apis, names), done)))
	return out
}

// generateFor is the workload stage of one Glance: the whole workload
// (cfg.generate), or only the store drains the annotations ask for,
// whoever writes the workload. It names what it generated; ok is false
// when it failed (reported in out).
func generateFor(cfg config, inv *inventory, ge *glanceEntry, p plan, apis []renderedAPI, wirings []wire.Wiring, out *output) (generated []string, ok bool) {
	g := ge.g
	var objs fn.KubeObjects
	switch {
	case cfg.generate:
		var rs []findings.Finding
		var err error
		objs, rs, err = generate(inv, ge, apis, wirings, p.drains)
		out.report(rs...)
		if err != nil {
			out.report(findings.About(ge.obj, findings.Error, ruleWorkload, fmt.Sprintf("generating the workload of Glance %s: %v", g.Name, err)))
			return nil, false
		}
	case len(p.drains) > 0:
		var err error
		objs, err = workload.StoreDrains(g, p.drains, workloadAPIs(apis, wirings))
		if err != nil {
			out.report(findings.About(ge.obj, findings.Error, "store-drain", fmt.Sprintf("generating the store drain of Glance %s: %v", g.Name, err)))
			return nil, false
		}
	}
	for _, o := range objs {
		generated = append(generated, o.GetKind()+" "+o.GetName())
	}
	out.added = append(out.added, objs...)
	return generated, true
}

// lastWave puts every Glance and GlanceBackend that names no sync wave in
// the last one (v1alpha1.WaveAfter): their health reads what every other
// wave applies (the Jobs, the rolled-out Deployments, the drains), so
// applied earlier they would hold a wave that waits on them. A run with
// errors ships nothing, and so changes nothing here either.
func lastWave(inv *inventory) []findings.Finding {
	var results []findings.Finding
	objs := make([]*fn.KubeObject, 0, len(inv.glances)+len(inv.backends))
	for _, ge := range inv.glances {
		objs = append(objs, ge.obj)
	}
	for _, be := range inv.backends {
		objs = append(objs, be.obj)
	}
	for _, o := range objs {
		if err := workload.SetWaveIfAbsent(o, v1alpha1.WaveAfter); err != nil {
			results = append(results, findings.About(o, findings.Error, ruleWave, err.Error()))
		}
	}
	return results
}

// judge is every check of one Glance: the check chain, then its plan.
func judge(inv *inventory, ge *glanceEntry) (plan, []findings.Finding, bool) {
	results, valid := runChecks(ge)
	path, ok := checkUpgradePath(inv, ge)
	results, valid = append(results, path...), valid && ok
	if !valid {
		return plan{}, results, false
	}
	p, planned, ok := planGlance(inv, ge)
	return p, append(results, planned...), ok
}

// Validate runs every check Process runs, on the same input, and renders
// nothing: `glance-krm-fn validate` reports the findings of a change to
// files or a kpt package without a build (a kustomization it builds, with
// the function). It reports failure when a result is an error.
func Validate(rl *fn.ResourceList) bool {
	_, results := readConfig(rl.FunctionConfig)
	items, projected := projectControlPlanes(rl.Items)
	results = append(results, projected...)
	inv, found := takeInventory(items)
	results = append(results, found...)
	for _, ge := range inv.glances {
		_, judged, _ := judge(inv, ge)
		results = append(results, judged...)
	}
	if err := report(rl, results); err != nil {
		rl.Results = append(rl.Results, findings.Defect(err))
		return false
	}
	return !findings.HasErrors(results)
}

// keepCopies is the history stage: each distinct rendered file of the
// Glance's APIs (APIs that read the same files share them) becomes its
// current copy, and earlier copies beyond the history are dropped. names
// are each API's Secret and ConfigMap.
func keepCopies(inv *inventory, ge *glanceEntry, apis []renderedAPI) (names [][2]string, kept output, err error) {
	mounted := map[string]bool{}
	for _, objs := range []fn.KubeObjects{ge.workloads, inv.generatedBy[objKey{ge.g.Namespace, ge.g.Name}]} {
		for _, o := range objs {
			history.Mounted(o.CopyToResourceNode().YNode(), mounted)
		}
	}
	names = make([][2]string, len(apis))
	for i, component := range []string{v1alpha1.ComponentBackends, v1alpha1.ComponentConfig} {
		rs := make([]history.Rendered, len(apis))
		for j, a := range apis {
			data := a.files.Config
			if component == v1alpha1.ComponentBackends {
				data = map[string]string{v1alpha1.KeyBackendsConf: a.files.BackendsConf}
			}
			rs[j] = history.Rendered{Glance: ge.g, Component: component, Data: data}
			names[j][i] = rs[j].Name()
		}
		copies, stale := inv.copiesOf(ge, component, rs[0].Kind())
		objs, drop, err := history.Upsert(copies, rs, mounted)
		if err != nil {
			return nil, output{}, err
		}
		kept.added = append(kept.added, objs...)
		kept.drop = append(append(kept.drop, stale...), drop...)
	}
	return names, kept, nil
}

// The rules of wiring, of the sync waves and of generating the workload.
const (
	ruleWire     = "wire"
	ruleWave     = "sync-wave"
	ruleWorkload = "workload"
)

// wireWorkloads wires each Deployment or StatefulSet of one API.
func wireWorkloads(ge *glanceEntry, w wire.Wiring, workloads []*fn.KubeObject) (wired []string, results []findings.Finding) {
	for _, obj := range workloads {
		id := obj.GetKind() + " " + obj.GetName()
		rn := obj.MoveToResourceNode()
		warning, errs := w.Workload(rn)
		*obj = *fn.MoveToKubeObject(rn)
		switch {
		case len(errs) > 0:
			for _, err := range errs {
				results = append(results, findings.About(obj, findings.Error, ruleWire, fmt.Sprintf("not wiring %s: %v", id, err)))
			}
		case warning != "":
			results = append(results, findings.About(obj, findings.Warning, ruleWire, fmt.Sprintf(
				"%s belongs to Glance %q but was not wired: %s", id, ge.g.Name, warning)))
		default:
			wired = append(wired, id)
			if err := workload.SetWaveIfAbsent(obj, v1alpha1.WaveWorkload); err != nil {
				results = append(results, findings.About(obj, findings.Error, ruleWave, fmt.Sprintf("%s: %v", id, err)))
			}
			if from := wire.EnvFromSources(obj); from != "" {
				results = append(results, findings.About(obj, findings.Warning, "wire-env-from", fmt.Sprintf(
					"%s takes environment variables from %s into its glance-api container; glance-krm cannot see them at build time: make sure none is an OS_<SECTION>__<OPTION> variable, which would override the rendered files and credentials",
					id, from)))
			}
		}
	}
	return wired, results
}

func workloadAPIs(apis []renderedAPI, wirings []wire.Wiring) []workload.API {
	in := make([]workload.API, len(apis))
	for i, a := range apis {
		in[i] = workload.API{Resolved: a.api, Wiring: wirings[i], Egress: a.files.Egress, Served: len(a.workloads) > 0}
	}
	return in
}

// generate runs the workload stage and keeps what the input does not
// already hold: an object of the same kind, namespace and name is the
// user's, kept as written.
func generate(inv *inventory, ge *glanceEntry, apis []renderedAPI, wirings []wire.Wiring, drains []v1alpha1.StoreDrain) (fn.KubeObjects, []findings.Finding, error) {
	g := ge.g
	set, err := workload.Generate(g, workloadAPIs(apis, wirings), drains)
	if err != nil {
		return nil, nil, err
	}
	var objs fn.KubeObjects
	var results []findings.Finding
	for _, obj := range set.Objects {
		if inv.userObjects[workload.Identity(obj.GetAPIVersion(), obj.GetKind(), obj.GetNamespace(), obj.GetName())] {
			results = append(results, findings.About(obj, findings.Note, ruleWorkload, fmt.Sprintf("the input holds %s %s: it is kept as written and not generated from Glance %s",
				obj.GetKind(), obj.GetName(), g.Name)))
			continue
		}
		objs = append(objs, obj)
	}
	if len(set.UnknownEgress) > 0 && len(g.Spec.NetworkPolicy.AdditionalEgress) == 0 {
		results = append(results, findings.About(ge.obj, findings.Warning, "egress-not-rendered", fmt.Sprintf(
			"%s: the generated NetworkPolicy admits by port what the rendered files name, but glance-api also contacts %s: admit it with spec.networkPolicy.additionalEgress",
			v1alpha1.ReasonEgressNotRendered, strings.Join(set.UnknownEgress, "; "))).Because(v1alpha1.ReasonEgressNotRendered).At("spec.networkPolicy.additionalEgress"))
	}
	return objs, results, nil
}
