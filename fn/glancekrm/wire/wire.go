package wire

import (
	"fmt"
	"slices"
	"strings"

	"github.com/c5c3/glance-krm/fn/glancekrm/ynode"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

// Wiring is what one Glance's workloads must point at.
type Wiring struct {
	Glance           *v1alpha1.Glance
	Backends         []*v1alpha1.GlanceBackend // the stores of the API the workload serves
	ConfigMap        string                    // the rendered config ConfigMap
	BackendsSecret   string                    // the rendered backends.conf Secret
	CredentialsImage string
	// Options maps the OS_<GROUP>__<OPTION> variable of every option the
	// rendered files set to the option (render.Files.Options): such a
	// variable in the container would silently win over the files, as it
	// would over the credentials the init container writes.
	Options map[string]string
}

// IsWorkloadKind tells whether glance-krm wires objects of this kind.
func IsWorkloadKind(apiVersion, kind string) bool {
	return apiVersion == "apps/v1" && (kind == "Deployment" || kind == "StatefulSet")
}

// ConfigDirs are the directories glance-krm mounts, in the order
// oslo.config must read them (later ones win): the ones it reads by
// default for glance-api, so that a command line without --config-dir, a
// shell script and a WSGI server (which takes no flags) all read them.
var ConfigDirs = []string{v1alpha1.MountConfigDir, v1alpha1.MountCredentialsDir}

// legacyConfigDirs are the --config-dir flags an earlier glance-krm
// appended; oslo.config refuses a --config-dir that does not exist, so
// they go with the volumes that backed them.
var legacyConfigDirs = []string{"/etc/glance/backends.conf.d/", "/etc/glance/credentials.conf.d/"}

// wire points a Deployment or StatefulSet at the rendered objects and
// delivers every secret through the credentials init container. It checks
// everything before it changes anything, so a refused workload is left as
// it was; it returns a warning when the workload has no glance-api
// container. Each step finds what is already there before it adds, so
// Wiring a wired workload changes nothing.
func (w Wiring) Workload(rn *yaml.RNode) (string, []error) {
	pod, err := rn.Pipe(yaml.Lookup("spec", "template", "spec"))
	if err != nil {
		return "", nonNil(err)
	}
	c, why, err := glanceContainer(pod)
	if err != nil || c == nil {
		return why, nonNil(err)
	}
	legacy := w.legacyVolumes(pod)
	var errs []error
	plan, err := planConfigDirs(c)
	if err != nil {
		errs = append(errs, err)
	}
	dirs, err := mountDirs(c, &w.Glance.Spec)
	if err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, mountConflicts(c, legacy, dirs)...)
	legacyEnv, err := w.envConflicts(c)
	if err != nil {
		errs = append(errs, err)
	}
	image, err := mergeImage(rn, v1alpha1.AnnotationGlanceAPIImage, c, "container "+v1alpha1.GlanceAPIContainer, w.Glance.Spec.Image.Ref())
	if err != nil {
		errs = append(errs, err)
	}
	initC, err := w.findInit(pod)
	if err != nil {
		errs = append(errs, err)
	}
	initImage, err := mergeImage(rn, v1alpha1.AnnotationCredentialsImage, initC, "init container "+v1alpha1.CredentialsContainer, w.CredentialsImage)
	if err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return "", errs
	}
	return "", nonNil(w.apply(rn, pod, c, legacy, plan, dirs, legacyEnv, image, initImage))
}

// apply makes the changes wire decided on.
func (w Wiring) apply(rn, pod, c *yaml.RNode, legacy map[string]bool, plan configDirPlan, dirs, legacyEnv []string, image, initImage string) error {

	if err := w.setVolumes(pod, legacy); err != nil {
		return err
	}
	if err := setInitContainer(pod, w.initContainer(initImage)); err != nil {
		return err
	}
	if err := c.PipeE(yaml.SetField("image", yaml.NewStringRNode(image))); err != nil {
		return err
	}
	if err := setMounts(c, legacy, dirs); err != nil {
		return err
	}
	if err := stripLegacyDirs(c); err != nil {
		return err
	}
	if err := plan.apply(c); err != nil {
		return err
	}
	if err := removeEnv(c, legacyEnv); err != nil {
		return err
	}
	if err := addEnv(c, v1alpha1.ChecksumEnv(w.Glance.Spec.OpenStackRelease, w.Backends)); err != nil {
		return err
	}
	for _, a := range [][2]string{{v1alpha1.AnnotationCredentialsImage, w.CredentialsImage}, {v1alpha1.AnnotationGlanceAPIImage, w.Glance.Spec.Image.Ref()}} {
		if err := rn.PipeE(yaml.SetAnnotation(a[0], a[1])); err != nil {
			return err
		}
	}
	// Every workload glance-krm wires carries its Glance's name as a label
	// (on the object, not the pods): the runtime controller caches only
	// Deployments with this label.
	return rn.PipeE(yaml.SetLabel(v1alpha1.LabelGlance, w.Glance.Name))
}

func nonNil(err error) []error {
	if err == nil {
		return nil
	}
	return []error{err}
}

// glanceContainer is the container that runs glance-api: the one named
// glance-api, else the only container whose command line runs glance-api.
// Nothing else is ever treated as glance-api, so a workload that merely
// carries a Glance's name or label (kustomize labels: spreads labels onto
// every object) is never rewritten.
func glanceContainer(pod *yaml.RNode) (*yaml.RNode, string, error) {
	if pod == nil {
		return nil, "it has no pod template", nil
	}
	cs, err := pod.Pipe(yaml.Lookup("containers"))
	if err != nil || cs == nil {
		return nil, "it has no containers", err
	}
	c, err := cs.Pipe(yaml.MatchElement("name", v1alpha1.GlanceAPIContainer))
	if err != nil || c != nil {
		return c, "", err
	}
	elems, err := cs.Elements()
	if err != nil {
		return nil, "", err
	}
	var running []*yaml.RNode
	for _, e := range elems {
		if argv := append(stringList(e, "command"), stringList(e, "args")...); runsGlanceAPI(argv) {
			running = append(running, e)
		}
	}
	if len(running) == 1 {
		return running[0], "", nil
	}
	return nil, fmt.Sprintf("no container is named %q and %d run glance-api, so none is treated as glance-api (name the glance-api container %q)",
		v1alpha1.GlanceAPIContainer, len(running), v1alpha1.GlanceAPIContainer), nil
}

// runsGlanceAPI tells whether a command line starts glance-api: directly,
// through a wrapper (tini, dumb-init, env), in a shell script, or as the
// WSGI application of a WSGI server (uwsgi --ini glance-api-uwsgi.ini).
func runsGlanceAPI(argv []string) bool {
	for _, a := range argv {
		if base(a) == "glance-api" || strings.Contains(a, "glance-api ") || strings.HasSuffix(a, "glance-api") {
			return true
		}
	}
	return wsgiServer(argv)
}

// wsgiServer tells a WSGI server serving Glance's API application, run
// directly or by a wrapper (tini, dumb-init, env): glance then reads its
// default config directories and takes no flags.
func wsgiServer(argv []string) bool {
	server := serverOf(argv)
	return server >= 0 && slices.ContainsFunc(argv[server+1:], func(a string) bool { return strings.Contains(a, "glance") })
}

// serverOf is the index of the WSGI server in a command line that starts
// one directly or through wrappers, else -1.
func serverOf(argv []string) int {
	for i, a := range argv {
		switch {
		case slices.Contains(wsgiServers, base(a)):
			return i
		case strings.HasPrefix(a, "-"), slices.Contains(wrappers, base(a)):
		case i > 0 && base(argv[0]) == "env" && strings.Contains(a, "="): // env NAME=value
		default:
			return -1
		}
	}
	return -1
}

func base(p string) string {
	return p[strings.LastIndex(p, "/")+1:]
}

// wsgiServers are the WSGI servers glance-krm recognises in a command
// line; wrappers are the programs that may start one.
var (
	wsgiServers = []string{"uwsgi", "gunicorn"}
	wrappers    = []string{"tini", "dumb-init", "catatonit", "env"}
)

// mountConflicts names every mount of the user's at a path where
// glance-krm mounts one of its volumes: one path, two mounts, is refused
// by the API server or hides one of them.
func mountConflicts(c *yaml.RNode, legacy map[string]bool, dirs []string) []error {
	mounts, _ := c.Pipe(yaml.Lookup("volumeMounts"))
	if mounts == nil {
		return nil
	}
	elems, _ := mounts.Elements()
	var errs []error
	for _, m := range elems {
		name, path := ynode.String(m, "name"), strings.TrimSuffix(ynode.String(m, "mountPath"), "/")
		if strings.HasPrefix(name, v1alpha1.ReservedPrefix) || legacy[name] {
			continue
		}
		for _, d := range dirs {
			if path == strings.TrimSuffix(d, "/") {
				errs = append(errs, fmt.Errorf("volumeMount %q of container %s is at %s, where glance-krm mounts its volume %q: move or remove it (glance-krm's volumes are the %s* ones)",
					name, ynode.String(c, "name"), d, ourVolumeAt(d), v1alpha1.ReservedPrefix))
			}
		}
	}
	return errs
}

func ourVolumeAt(dir string) string {
	if dir == v1alpha1.MountConfigDir {
		return v1alpha1.VolumeConfig
	}
	return v1alpha1.VolumeCredentials
}

// legacyVolumes are the unprefixed config and backends volumes that an
// earlier glance-krm wrote (a kpt package keeps them): recognised by the
// generated object they name, so a user's own "config" volume is never one.
func (w Wiring) legacyVolumes(pod *yaml.RNode) map[string]bool {
	out := map[string]bool{}
	vols, _ := pod.Pipe(yaml.Lookup("volumes"))
	if vols == nil {
		return out
	}
	for name, path := range map[string][]string{
		"config":   {"configMap", "name"},
		"backends": {"secret", "secretName"},
	} {
		v, _ := vols.Pipe(yaml.MatchElement("name", name))
		if v == nil {
			continue
		}
		ref, _ := v.Pipe(yaml.Lookup(path...))
		if ref != nil && strings.HasPrefix(ref.YNode().Value, w.Glance.Name+"-"+name+"-") {
			out[name] = true
		}
	}
	return out
}

// RunsGlanceAPI tells whether a Deployment or StatefulSet has a container
// that runs glance-api, as the wiring finds it.
func RunsGlanceAPI(obj *fn.KubeObject) bool {
	pod, _ := obj.CopyToResourceNode().Pipe(yaml.Lookup("spec", "template", "spec"))
	c, _, _ := glanceContainer(pod)
	return c != nil
}
