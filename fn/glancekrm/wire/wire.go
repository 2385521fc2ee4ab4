package wire

import (
	"errors"
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

// configDirPlan is where the missing --config-dir flags go.
type configDirPlan struct {
	field   string // command or args
	missing []string
}

func (p configDirPlan) apply(c *yaml.RNode) error {
	if len(p.missing) == 0 {
		return nil
	}
	list, err := c.Pipe(yaml.LookupCreate(yaml.SequenceNode, p.field))
	if err != nil {
		return err
	}
	for _, d := range p.missing {
		if err := list.PipeE(yaml.Append(ynode.Str("--config-dir"), ynode.Str(d))); err != nil {
			return err
		}
	}
	return nil
}

var shells = []string{"sh", "bash", "dash", "ash", "ksh", "zsh", "busybox"}

// planConfigDirs decides how glance-api will read glance-krm's config
// dirs. oslo.config reads both by default for glance-api, but only while
// no --config-dir is given: a command line that names its own dirs gets
// ours appended at its end, where glance-api sees them and where they win.
// A shell script that names its own dirs must name ours or pass "$@" on;
// a container without a command (the image's entrypoint, and whether it
// passes --config-dir, is unknown at build time) and another program are
// refused with how to write them.
func planConfigDirs(c *yaml.RNode) (configDirPlan, error) {
	command, args := stringList(c, "command"), stringList(c, "args")
	argv := append(slices.Clone(command), args...)
	field := "args"
	if len(args) == 0 && len(command) > 0 {
		field = "command"
	}
	name := ynode.String(c, "name")
	if script, ok := shellScript(argv); ok {
		var missing []string
		for _, d := range ConfigDirs {
			if !scriptNamesDir(script, d) {
				missing = append(missing, d)
			}
		}
		switch {
		case len(missing) == 0 || !strings.Contains(script, "--config-dir"):
			return configDirPlan{}, nil
		case strings.Contains(script, "$@") && len(argv) > slices.Index(argv, script)+1:
			// sh -c '... glance-api "$@"' NAME: appended words become "$@".
			return configDirPlan{field: field, missing: missing}, nil
		}
		return configDirPlan{}, fmt.Errorf("container %s starts glance-api through a shell script that names its own --config-dir, which turns off oslo.config's default directories, and glance-krm cannot add its own to a script: end the glance-api line of the script with %s, or pass \"$@\" to glance-api and give the script a name argument, or drop the script's --config-dir",
			name, ConfigDirFlags(ConfigDirs))
	}
	switch {
	case len(command) == 0 && !runsGlanceAPI(args):
		return configDirPlan{}, fmt.Errorf("container %s sets no command, so the image's entrypoint runs glance-api with arguments unknown at build time (a --config-dir there would hide glance-krm's directories): set command: [glance-api] (or your WSGI server's command line)",
			name)
	case !runsGlanceAPI(argv):
		return configDirPlan{}, fmt.Errorf("container %s does not start glance-api in its command or args (%s): set command: [glance-api] (directly or through a wrapper), or a WSGI server serving glance (uwsgi --ini .../glance-api-uwsgi.ini)",
			name, strings.Join(argv, " "))
	case !slices.ContainsFunc(argv, func(a string) bool { return a == "--config-dir" || strings.HasPrefix(a, "--config-dir=") }):
		return configDirPlan{}, nil // oslo.config's defaults are ours
	}
	return configDirPlan{field: field, missing: missingDirs(argv)}, nil
}

// stripLegacyDirs removes the --config-dir flags an earlier glance-krm
// appended for directories it no longer mounts.
func stripLegacyDirs(c *yaml.RNode) error {
	for _, field := range []string{"command", "args"} {
		list, err := c.Pipe(yaml.Lookup(field))
		if err != nil || list == nil {
			continue
		}
		legacy := func(v string) bool {
			return slices.Contains(legacyConfigDirs, v) || slices.Contains(legacyConfigDirs, v+"/")
		}
		var out []*yaml.Node
		items := list.YNode().Content
		for i := 0; i < len(items); i++ {
			v := items[i].Value
			if d, ok := strings.CutPrefix(v, "--config-dir="); ok && legacy(d) {
				continue
			}
			if v == "--config-dir" && i+1 < len(items) && legacy(items[i+1].Value) {
				i++
				continue
			}
			out = append(out, items[i])
		}
		list.YNode().Content = out
	}
	return nil
}

// ConfigDirFlags is the --config-dir flags of a shell command line.
func ConfigDirFlags(dirs []string) string {
	var parts []string
	for _, d := range dirs {
		parts = append(parts, "--config-dir "+d)
	}
	return strings.Join(parts, " ")
}

// shellScript is the script of a `sh -c SCRIPT ...` command line.
func shellScript(argv []string) (string, bool) {
	if len(argv) < 2 || !slices.Contains(shells, base(argv[0])) {
		return "", false
	}
	for i, a := range argv[1:] {
		if strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.Contains(a, "c") && i+2 < len(argv) {
			return argv[i+2], true
		}
	}
	return "", false
}

func scriptNamesDir(script, dir string) bool {
	d := strings.TrimSuffix(dir, "/")
	for _, form := range []string{"--config-dir " + d + "/", "--config-dir " + d + " ", "--config-dir=" + d + "/", "--config-dir=" + d + " "} {
		if strings.Contains(script+" ", form) {
			return true
		}
	}
	return strings.HasSuffix(script, "--config-dir "+d) || strings.HasSuffix(script, "--config-dir="+d)
}

func missingDirs(argv []string) []string {
	var missing []string
	for _, d := range ConfigDirs {
		want := strings.TrimSuffix(d, "/")
		found := false
		for i, a := range argv {
			if v, ok := strings.CutPrefix(a, "--config-dir="); ok && strings.TrimSuffix(v, "/") == want {
				found = true
			}
			if a == "--config-dir" && i+1 < len(argv) && strings.TrimSuffix(argv[i+1], "/") == want {
				found = true
			}
		}
		if !found {
			missing = append(missing, d)
		}
	}
	return missing
}

func stringList(c *yaml.RNode, field string) []string {
	n := c.Field(field)
	if n == nil {
		return nil
	}
	elems, err := n.Value.Elements()
	if err != nil {
		return nil
	}
	out := make([]string, len(elems))
	for i, e := range elems {
		out[i] = e.YNode().Value
	}
	return out
}

// mountDirs are the directories glance-krm mounts into a glance-api
// container: ConfigDirs, and where a WSGI server runs a glance that reads
// the server's own directory (WSGIReadsServerDir) the credentials once
// more there, /etc/glance/<server>.conf.d/. A shell script starting a
// WSGI server on such a release is refused: which program the script
// finally runs decides the directory, and a script cannot be read for it.
func mountDirs(c *yaml.RNode, s *v1alpha1.GlanceSpec) ([]string, error) {
	if !s.WSGIReadsServerDir() {
		return ConfigDirs, nil
	}
	argv := append(stringList(c, "command"), stringList(c, "args")...)
	if script, ok := shellScript(argv); ok {
		for _, server := range wsgiServers {
			if strings.Contains(script, server) {
				return nil, fmt.Errorf("container %s starts %s through a shell script: glance before 2026.2 reads its credentials from /etc/glance/<program>.conf.d/, named after the program the script finally runs, which glance-krm cannot tell from a script: make %s the container's command (command: [%s, --ini, ...])",
					ynode.String(c, "name"), server, server, server)
			}
		}
		return ConfigDirs, nil
	}
	if i := serverOf(argv); i >= 0 {
		return append(slices.Clone(ConfigDirs), "/etc/glance/"+base(argv[i])+".conf.d/"), nil
	}
	return ConfigDirs, nil
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

// envConflicts finds variables that would override what glance-krm
// delivers (oslo.config lets OS_<GROUP>__<OPTION> win over every file),
// and returns the variables an earlier glance-krm wrote for the same
// Secrets, which are dropped.
func (w Wiring) envConflicts(c *yaml.RNode) ([]string, error) {
	list, _ := c.Pipe(yaml.Lookup("env"))
	if list == nil {
		return nil, nil
	}
	elems, _ := list.Elements()
	legacy := w.legacyEnv()
	var drop []string
	var errs []error
	for _, e := range elems {
		name := ynode.String(e, "name")
		ref, _ := e.Pipe(yaml.Lookup("valueFrom", "secretKeyRef"))
		if ref != nil && isLegacyEnv(legacy, name, ynode.String(ref, "name"), ynode.String(ref, "key")) {
			drop = append(drop, name)
			continue
		}
		if from, ok := w.overridden(strings.ToUpper(name)); ok {
			errs = append(errs, fmt.Errorf("env %s of container %s would override %s, which glance-krm delivers (oslo.config lets the environment win over files): remove it and set the option through the Glance or GlanceBackend",
				name, ynode.String(c, "name"), from))
		}
	}
	return drop, errors.Join(errs...)
}

type secretKey struct{ secret, key string }

// isLegacyEnv tells a variable that glance-krm wrote before credentials
// travelled in a file: one of the current credentials' secretKeyRefs, or
// a store key variable pointing at a contract key (a store since removed).
func isLegacyEnv(legacy map[string]secretKey, name, secret, key string) bool {
	if want, ok := legacy[name]; ok {
		return want == secretKey{secret, key}
	}
	return v1alpha1.IsStoreCredentialEnv(name) &&
		(key == v1alpha1.CredentialsAccessKeyID || key == v1alpha1.CredentialsSecretAccessKey)
}

// legacyEnv is what glance-krm before the credentials file wrote: a
// secretKeyRef variable per credential.
func (w Wiring) legacyEnv() map[string]secretKey {
	s := &w.Glance.Spec
	env := map[string]secretKey{
		v1alpha1.EnvKeystonePassword:   {s.ServiceUser.SecretRef.Name, s.ServiceUser.SecretRef.Key},
		v1alpha1.EnvDatabaseConnection: {s.Database.SecretRef.Name, s.Database.SecretRef.Key},
	}
	for _, b := range w.Backends {
		access, secret := v1alpha1.StoreEnvNames(b.Name)
		ref := b.Spec.S3.CredentialsSecretRef.Name
		env[access] = secretKey{ref, v1alpha1.CredentialsAccessKeyID}
		env[secret] = secretKey{ref, v1alpha1.CredentialsSecretAccessKey}
	}
	return env
}

func removeEnv(c *yaml.RNode, names []string) error {
	if len(names) == 0 {
		return nil
	}
	list, err := c.Pipe(yaml.Lookup("env"))
	if err != nil || list == nil {
		return err
	}
	list.YNode().Content = slices.DeleteFunc(list.YNode().Content, func(n *yaml.Node) bool {
		return slices.Contains(names, ynode.String(yaml.NewRNode(n), "name"))
	})
	if len(list.YNode().Content) == 0 {
		return c.PipeE(yaml.Clear("env"))
	}
	return nil
}

// addEnv adds each variable the container does not set yet, after its
// own: one the workload already sets is the user's choice and stays.
func addEnv(c *yaml.RNode, env [][2]string) error {
	if len(env) == 0 {
		return nil
	}
	list, err := c.Pipe(yaml.LookupCreate(yaml.SequenceNode, "env"))
	if err != nil {
		return err
	}
	set := map[string]bool{}
	for _, n := range list.YNode().Content {
		set[ynode.String(yaml.NewRNode(n), "name")] = true
	}
	for _, e := range env {
		if !set[e[0]] {
			list.YNode().Content = append(list.YNode().Content, ynode.Mapping("name", e[0], "value", e[1]))
		}
	}
	return nil
}

// EnvFromSources names the ConfigMaps and Secrets a wired workload's
// glance-api container takes its environment from, or "".
func EnvFromSources(obj *fn.KubeObject) string {
	rn := obj.CopyToResourceNode()
	pod, _ := rn.Pipe(yaml.Lookup("spec", "template", "spec"))
	c, _, _ := glanceContainer(pod)
	if c == nil {
		return ""
	}
	list, _ := c.Pipe(yaml.Lookup("envFrom"))
	if list == nil {
		return ""
	}
	elems, _ := list.Elements()
	var names []string
	for _, e := range elems {
		for _, kind := range []string{"configMapRef", "secretRef"} {
			if ref, _ := e.Pipe(yaml.Lookup(kind)); ref != nil {
				names = append(names, kind+" "+ynode.String(ref, "name"))
			}
		}
	}
	return strings.Join(names, ", ")
}

// overridden is the delivered option an environment variable would
// override: a rendered one, or a credential.
func (w Wiring) overridden(variable string) (string, bool) {
	if from, ok := w.Options[variable]; ok {
		return from, true
	}
	from, ok := w.credentialOptions()[variable]
	return from, ok
}

// RunsGlanceAPI tells whether a Deployment or StatefulSet has a container
// that runs glance-api, as the wiring finds it.
func RunsGlanceAPI(obj *fn.KubeObject) bool {
	pod, _ := obj.CopyToResourceNode().Pipe(yaml.Lookup("spec", "template", "spec"))
	c, _, _ := glanceContainer(pod)
	return c != nil
}
