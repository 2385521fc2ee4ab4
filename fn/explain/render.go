// Package explain tells a reviewer what a change to the Glance
// configuration in git does, before it is merged: it reads two renders
// (what kustomize, kpt or Argo CD produce with glance-krm, before and after
// the change) and says, per Glance, which stores come and go, which
// options change, which default store serves, which hashed objects get
// new names and so which workloads roll, and what deserves a warning.
package explain

import (
	"encoding/base64"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

// Render is what one build says about each Glance.
type Render struct {
	Glances map[string]*Glance // by namespace/name
}

// Glance is one Glance as rendered.
type Glance struct {
	Release     string
	Stores      map[string]map[string]string            // store -> option -> value, from backends.conf
	Defaults    map[string]string                       // Image API (workload) -> default store, from glance-api.conf
	Credentials map[string]string                       // store -> credentials Secret (its GlanceBackend)
	Config      map[string]map[string]map[string]string // Image API -> glance-api.conf: section -> option -> value
	Files       []string                                // the hashed objects the workloads mount: "ConfigMap/<name>", "Secret/<name>"
	Workloads   map[string]string                       // "Deployment/<name>" -> its pod template, serialized
	APIStores   map[string][]string                     // Image API -> the stores its workload's backends.conf holds
	Objects     map[string]string                       // the Glance's other generated objects ("Service/<name>"), serialized
	DrainsTo    map[string]string                       // store -> the store its drain-to annotation moves its images into
	DrainJobs   map[string]string                       // store -> the name of the generated Job that drains it
	Images      map[string]string                       // "Deployment/<name>" -> the image its glance-api container runs
}

// Read reads a build's output: multi-document YAML, a ResourceList (a
// kpt or function output) or a List. It refuses what is not a whole
// render of the function (objects says what is not one render; a Glance
// the function never rendered is refused here).
func Read(b []byte) (*Render, error) {
	nodes, err := objects(b)
	if err != nil {
		return nil, err
	}
	if len(nodes) == 0 {
		return nil, fmt.Errorf("not a render: it holds no object (an empty file, or a build that failed and wrote nothing)")
	}
	r := &Render{Glances: map[string]*Glance{}}
	byName := map[string]*yaml.RNode{}
	for _, n := range nodes {
		byName[n.GetKind()+"/"+n.GetNamespace()+"/"+n.GetName()] = n
		if n.GetKind() == v1alpha1.GlanceKind {
			release, _ := n.GetString("spec.openStackRelease")
			r.Glances[key(n.GetNamespace(), n.GetName())] = &Glance{Release: release,
				Stores: map[string]map[string]string{}, Defaults: map[string]string{}, Credentials: map[string]string{},
				Config: map[string]map[string]map[string]string{}, Workloads: map[string]string{},
				APIStores: map[string][]string{}, Objects: map[string]string{}, DrainsTo: map[string]string{},
				DrainJobs: map[string]string{}, Images: map[string]string{}}
		}
	}
	if err := r.functionRan(nodes); err != nil {
		return nil, err
	}
	for _, n := range nodes {
		switch n.GetKind() {
		case v1alpha1.GlanceBackendKind:
			glance, _ := n.GetString("spec.glanceRef.name")
			secret, _ := n.GetString("spec.s3.credentialsSecretRef.name")
			if g := r.Glances[key(n.GetNamespace(), glance)]; g != nil {
				g.Credentials[n.GetName()] = secret
				if to := n.GetAnnotations()[v1alpha1.AnnotationDrainTo]; to != "" {
					g.DrainsTo[n.GetName()] = to
				}
			}
		case "Deployment", "StatefulSet":
			if err := r.workload(n, byName); err != nil {
				return nil, fmt.Errorf("%s %s: %w", n.GetKind(), n.GetName(), err)
			}
		case "ConfigMap", "Secret":
			// the rendered files: judged through the workloads that mount them
		default:
			if g := r.Glances[key(n.GetNamespace(), n.GetLabels()[v1alpha1.LabelGlance])]; g != nil && n.GetLabels()[v1alpha1.LabelComponent] == v1alpha1.ComponentWorkload {
				body, err := n.Pipe(yaml.Lookup("spec"))
				if err != nil {
					return nil, err
				}
				text := ""
				if body != nil {
					if text, err = body.String(); err != nil {
						return nil, err
					}
				}
				g.Objects[n.GetKind()+"/"+n.GetName()] = text
				if n.GetKind() == "Job" {
					g.drainJob(n)
				}
			}
		}
	}
	// A Glance rendered without a workload (workloads: none, the workload
	// kept in another build): its newest rendered copies stand for what
	// its pods will mount.
	for name, g := range r.Glances {
		if len(g.Workloads) > 0 {
			continue
		}
		if err := g.newestCopies(name, nodes); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// functionRan refuses a render holding a Glance the function did not
// render: no rendered config of it (kustomize without --enable-exec
// prints its input unchanged and exits 0). The function renders every
// Glance it accepts, and refuses the whole build otherwise, so a render
// with a Glance and none of its rendered copies is the function's input.
func (r *Render) functionRan(nodes []*yaml.RNode) error {
	rendered := map[string]map[string]bool{}
	backends := map[string]int{}
	for _, n := range nodes {
		l := n.GetLabels()
		if c := l[v1alpha1.LabelComponent]; (n.GetKind() == "ConfigMap" && c == v1alpha1.ComponentConfig) || (n.GetKind() == "Secret" && c == v1alpha1.ComponentBackends) {
			k := key(n.GetNamespace(), l[v1alpha1.LabelGlance])
			if rendered[k] == nil {
				rendered[k] = map[string]bool{}
			}
			rendered[k][c] = true
		}
		if n.GetKind() == v1alpha1.GlanceBackendKind {
			glance, _ := n.GetString("spec.glanceRef.name")
			backends[key(n.GetNamespace(), glance)]++
		}
	}
	for _, name := range slices.Sorted(maps.Keys(r.Glances)) {
		config, secret := rendered[name][v1alpha1.ComponentConfig], rendered[name][v1alpha1.ComponentBackends]
		switch {
		case !config && !secret && len(orphans(rendered, r.Glances)) > 0:
			return fmt.Errorf("not a render explain can judge: Glance %s has no rendered copies, while copies rendered for Glance %s are here, which is not in it: was the Glance renamed or moved above the kustomization that runs glance-krm (namePrefix, nameSuffix or namespace in an overlay)? Then its stores keep the old names: declare glance-krm in the kustomization you build (docs/doors.md)", name, strings.Join(orphans(rendered, r.Glances), ", "))
		case !config && !secret:
			return fmt.Errorf("not a render: the function did not run on Glance %s (no rendered ConfigMap <glance>-config-<hash>, no rendered backends Secret for its %d attached GlanceBackends): this is its input; build with `kustomize build --enable-alpha-plugins --enable-exec` (without --enable-exec kustomize skips the function silently), or pass what kpt or the Argo CD plugin rendered", name, backends[name])
		case !config:
			return fmt.Errorf("not a whole render: Glance %s has a rendered backends Secret but no rendered ConfigMap <glance>-config-<hash> (a truncated file?)", name)
		case !secret && backends[name] > 0:
			return fmt.Errorf("not a whole render: Glance %s has %d attached GlanceBackends and a rendered ConfigMap, but no rendered backends Secret (a truncated file?)", name, backends[name])
		}
	}
	return nil
}

// orphans are the Glances (namespace/name) rendered copies were made for
// that the render does not hold.
func orphans(rendered map[string]map[string]bool, glances map[string]*Glance) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(rendered)) {
		if glances[k] == nil {
			out = append(out, k)
		}
	}
	return out
}

// drainJob records a generated store drain Job by the store it drains:
// the annotation the function writes, or the Job's command line
// (python3 drain.py FROM TO) in renders older than it.
func (g *Glance) drainJob(n *yaml.RNode) {
	if n.GetLabels()[labelAppComponent] != componentStoreDrain {
		return
	}
	from := n.GetAnnotations()[v1alpha1.AnnotationDrainFrom]
	if from == "" {
		if cmd, _ := n.Pipe(yaml.Lookup("spec", "template", "spec", "containers", "[name="+componentStoreDrain+"]", "command")); cmd != nil {
			if args, err := cmd.Elements(); err == nil && len(args) == 4 {
				from = yaml.GetValue(args[2])
			}
		}
	}
	if from != "" {
		g.DrainJobs[from] = n.GetName()
	}
}

// failedRun is the first error result of a ResourceList, or "".
func failedRun(rl *yaml.RNode) string {
	results, _ := rl.Pipe(yaml.Lookup("results"))
	if results == nil {
		return ""
	}
	elems, _ := results.Elements()
	for _, e := range elems {
		if sev, _ := e.GetString("severity"); sev == "error" {
			msg, _ := e.GetString("message")
			return redact(msg)
		}
	}
	return ""
}

// newestCopies reads the rendered ConfigMaps and Secrets of a Glance with
// the highest revision (under kustomize every copy is revision 1; under
// kpt older copies are kept beside the newest).
func (g *Glance) newestCopies(name string, nodes []*yaml.RNode) error {
	ns, glance, _ := strings.Cut(name, "/")
	newest := map[string]int{}
	var copies []*yaml.RNode
	for _, n := range nodes {
		l := n.GetLabels()
		if (n.GetKind() != "ConfigMap" && n.GetKind() != "Secret") || n.GetNamespace() != ns || l[v1alpha1.LabelGlance] != glance ||
			(l[v1alpha1.LabelComponent] != v1alpha1.ComponentConfig && l[v1alpha1.LabelComponent] != v1alpha1.ComponentBackends) {
			continue
		}
		copies = append(copies, n)
		newest[n.GetKind()] = max(newest[n.GetKind()], revision(n))
	}
	for _, n := range copies {
		if revision(n) != newest[n.GetKind()] {
			continue
		}
		g.Files = append(g.Files, n.GetKind()+"/"+n.GetName())
		if err := g.read(n, v1alpha1.DefaultAPIName); err != nil {
			return err
		}
	}
	slices.Sort(g.Files)
	return nil
}

func revision(n *yaml.RNode) int {
	v, _ := strconv.Atoi(n.GetAnnotations()[v1alpha1.AnnotationRevision])
	return v
}

func key(namespace, name string) string { return namespace + "/" + name }

// The labels the function gives a store drain Job (renders older than
// v1alpha1.AnnotationDrainFrom are recognised by them).
const (
	labelAppComponent   = "app.kubernetes.io/component"
	componentStoreDrain = "store-drain"
)

// workload records a Glance's workload: the one the function labelled
// with the Glance's name, or named like it.
func (r *Render) workload(n *yaml.RNode, byName map[string]*yaml.RNode) error {
	name := n.GetLabels()[v1alpha1.LabelGlance]
	if name == "" {
		name = n.GetName()
	}
	g := r.Glances[key(n.GetNamespace(), name)]
	if g == nil {
		return nil
	}
	tmpl, err := n.Pipe(yaml.Lookup("spec", "template"))
	if err != nil || tmpl == nil {
		return err
	}
	s, err := tmpl.String()
	if err != nil {
		return err
	}
	g.Workloads[n.GetKind()+"/"+n.GetName()] = s
	if img, _ := tmpl.Pipe(yaml.Lookup("spec", "containers", "[name="+v1alpha1.GlanceAPIContainer+"]", "image")); img != nil {
		g.Images[n.GetKind()+"/"+n.GetName()] = yaml.GetValue(img)
	}
	api := n.GetLabels()[v1alpha1.LabelAPI]
	if api == "" {
		api = v1alpha1.DefaultAPIName
	}
	for _, file := range mounted(tmpl) {
		if !slices.Contains(g.Files, file) {
			g.Files = append(g.Files, file)
		}
		kind, name, _ := strings.Cut(file, "/")
		obj := byName[kind+"/"+n.GetNamespace()+"/"+name]
		if obj == nil {
			return fmt.Errorf("not a whole render: it mounts %s %s, which is not in it (a truncated file?)", kind, name)
		}
		if err := g.read(obj, api); err != nil {
			return err
		}
	}
	slices.Sort(g.Files)
	return nil
}

// mounted are the ConfigMap and Secret the config volume projects.
func mounted(tmpl *yaml.RNode) []string {
	var out []string
	vols, _ := tmpl.Pipe(yaml.Lookup("spec", "volumes"))
	if vols == nil {
		return nil
	}
	_ = vols.VisitElements(func(v *yaml.RNode) error {
		if yaml.GetValue(v.Field("name").Value) != v1alpha1.VolumeConfig {
			return nil
		}
		srcs, _ := v.Pipe(yaml.Lookup("projected", "sources"))
		if srcs == nil {
			return nil
		}
		return srcs.VisitElements(func(s *yaml.RNode) error {
			for kind, field := range map[string]string{"ConfigMap": "configMap", "Secret": "secret"} {
				if f := s.Field(field); f != nil {
					if name := f.Value.Field("name"); name != nil {
						out = append(out, kind+"/"+yaml.GetValue(name.Value))
					}
				}
			}
			return nil
		})
	})
	slices.Sort(out)
	return out
}

// read takes the rendered files of one mounted object.
func (g *Glance) read(obj *yaml.RNode, api string) error {
	files := map[string]string{}
	for _, field := range []string{"data", "stringData"} {
		m, _ := obj.Pipe(yaml.Lookup(field))
		if m == nil {
			continue
		}
		entries, err := m.Map()
		if err != nil {
			return fmt.Errorf("%s %s: %s: %w", obj.GetKind(), obj.GetName(), field, err)
		}
		for k, v := range entries {
			s := fmt.Sprint(v)
			if field == "data" && obj.GetKind() == "Secret" {
				b, err := base64.StdEncoding.DecodeString(s)
				if err != nil {
					return fmt.Errorf("%s %s: data[%s]: %w", obj.GetKind(), obj.GetName(), k, err)
				}
				s = string(b)
			}
			files[k] = s
		}
	}
	if conf, ok := files[v1alpha1.KeyBackendsConf]; ok {
		sections, err := parse(conf)
		if err != nil {
			return fmt.Errorf("%s %s: %s: %w", obj.GetKind(), obj.GetName(), v1alpha1.KeyBackendsConf, err)
		}
		for name, opts := range sections {
			if name != "DEFAULT" { // a store is never DEFAULT (a reserved name)
				g.Stores[name] = opts
				if !slices.Contains(g.APIStores[api], name) {
					g.APIStores[api] = append(g.APIStores[api], name)
				}
			}
		}
		slices.Sort(g.APIStores[api])
	}
	if conf, ok := files[v1alpha1.KeyGlanceAPIConf]; ok {
		sections, err := parse(conf)
		if err != nil {
			return fmt.Errorf("%s %s: %s: %w", obj.GetKind(), obj.GetName(), v1alpha1.KeyGlanceAPIConf, err)
		}
		g.Config[api] = sections
		g.Defaults[api] = sections["glance_store"]["default_backend"]
	}
	return nil
}

// parse reads a rendered INI file as glance-api reads it.
func parse(conf string) (map[string]map[string]string, error) {
	return v1alpha1.ReadRenderedINI([]byte(conf))
}
