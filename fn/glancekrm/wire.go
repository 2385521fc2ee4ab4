package glancekrm

import (
	"fmt"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

// wiring is what one Glance's workloads must point at.
type wiring struct {
	glance      *v1alpha1.Glance
	backends    []*v1alpha1.GlanceBackend
	configMap   string
	backendsSec string
}

// isWorkloadKind tells whether glance-krm wires objects of this kind.
func isWorkloadKind(apiVersion, kind string) bool {
	return apiVersion == "apps/v1" && (kind == "Deployment" || kind == "StatefulSet")
}

// wire points a Deployment or StatefulSet at the rendered objects and
// delivers every secret through the kubelet. It returns a warning, or "".
// Each step finds what is already there before it adds, so wiring a wired
// workload changes nothing.
func (w wiring) wire(rn *yaml.RNode) (string, error) {
	pod, err := rn.Pipe(yaml.LookupCreate(yaml.MappingNode, "spec", "template", "spec"))
	if err != nil {
		return "", err
	}
	if err := setVolume(pod, v1alpha1.VolumeConfig, "configMap", "name", w.configMap); err != nil {
		return "", err
	}
	if err := setVolume(pod, v1alpha1.VolumeBackends, "secret", "secretName", w.backendsSec); err != nil {
		return "", err
	}
	c, warning, err := glanceContainer(pod)
	if c == nil || err != nil {
		return warning, err
	}
	if err := c.PipeE(yaml.SetField("image", yaml.NewStringRNode(imageRef(w.glance.Spec.Image)))); err != nil {
		return "", err
	}
	for _, m := range []struct{ volume, path string }{
		{v1alpha1.VolumeConfig, v1alpha1.MountConfigDir},
		{v1alpha1.VolumeBackends, v1alpha1.MountBackendsDir},
	} {
		path, err := ensureMount(c, m.volume, m.path)
		if err != nil {
			return "", err
		}
		if err := ensureConfigDir(c, path); err != nil {
			return "", err
		}
	}
	return "", setSecretEnv(c, w.secretEnv())
}

func imageRef(img v1alpha1.ImageSpec) string {
	if img.Digest != "" {
		return img.Repository + "@" + img.Digest
	}
	return img.Repository + ":" + img.Tag
}

// setVolume makes volume <name> a <source> (configMap or secret) of the
// given object, keeping other settings of an existing source of that type
// (defaultMode, items) and replacing a source of another type.
func setVolume(pod *yaml.RNode, name, source, nameField, object string) error {
	vols, err := pod.Pipe(yaml.LookupCreate(yaml.SequenceNode, "volumes"))
	if err != nil {
		return err
	}
	vol, err := vols.Pipe(yaml.MatchElement("name", name))
	if err != nil {
		return err
	}
	if vol == nil {
		vol = yaml.NewRNode(mapping("name", name))
		if err := vols.PipeE(yaml.Append(vol.YNode())); err != nil {
			return err
		}
	}
	if vol.Field(source) == nil {
		fields, err := vol.Fields()
		if err != nil {
			return err
		}
		for _, f := range fields {
			if f != "name" {
				if err := vol.PipeE(yaml.Clear(f)); err != nil {
					return err
				}
			}
		}
	}
	src, err := vol.Pipe(yaml.LookupCreate(yaml.MappingNode, source))
	if err != nil {
		return err
	}
	return src.PipeE(yaml.SetField(nameField, yaml.NewStringRNode(object)))
}

// glanceContainer is the container named glance-api, or the only container.
func glanceContainer(pod *yaml.RNode) (*yaml.RNode, string, error) {
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
	if len(elems) == 1 {
		return elems[0], "", nil
	}
	return nil, fmt.Sprintf("it has %d containers and none is named %q", len(elems), v1alpha1.GlanceAPIContainer), nil
}

// ensureMount returns where the volume is mounted, mounting it read-only at
// the default path when it is not.
func ensureMount(c *yaml.RNode, volume, defaultPath string) (string, error) {
	mounts, err := c.Pipe(yaml.LookupCreate(yaml.SequenceNode, "volumeMounts"))
	if err != nil {
		return "", err
	}
	m, err := mounts.Pipe(yaml.MatchElement("name", volume))
	if err != nil {
		return "", err
	}
	if m != nil {
		if f := m.Field("mountPath"); f != nil && f.Value.YNode().Value != "" {
			return f.Value.YNode().Value, nil
		}
	}
	return defaultPath, mounts.PipeE(yaml.Append(mapping("mountPath", defaultPath, "name", volume, "readOnly", true)))
}

// ensureConfigDir adds --config-dir <path> to the container's argv unless it
// is there. It goes last, because oslo.config lets later files override
// earlier ones and a base --config-file baked into an image must not win.
func ensureConfigDir(c *yaml.RNode, path string) error {
	command, err := stringList(c, "command")
	if err != nil {
		return err
	}
	args, err := stringList(c, "args")
	if err != nil {
		return err
	}
	argv := append(slices.Clone(command), args...)
	want := strings.TrimSuffix(path, "/")
	for i, a := range argv {
		if v, ok := strings.CutPrefix(a, "--config-dir="); ok && strings.TrimSuffix(v, "/") == want {
			return nil
		}
		if a == "--config-dir" && i+1 < len(argv) && strings.TrimSuffix(argv[i+1], "/") == want {
			return nil
		}
	}
	field := "args"
	if len(args) == 0 && len(command) > 0 {
		field = "command"
	}
	list, err := c.Pipe(yaml.LookupCreate(yaml.SequenceNode, field))
	if err != nil {
		return err
	}
	return list.PipeE(yaml.Append(yaml.NewStringRNode("--config-dir").YNode(), yaml.NewStringRNode(path).YNode()))
}

func stringList(c *yaml.RNode, field string) ([]string, error) {
	n := c.Field(field)
	if n == nil {
		return nil, nil
	}
	elems, err := n.Value.Elements()
	if err != nil {
		return nil, err
	}
	out := make([]string, len(elems))
	for i, e := range elems {
		out[i] = e.YNode().Value
	}
	return out, nil
}

// envVar is one secretKeyRef environment variable.
type envVar struct {
	name, secret, key string
	optional          bool
}

// secretEnv is every variable that carries a secret into glance-api: each
// store's S3 keys (optional, so one missing Secret disables one store
// instead of keeping the pod from starting), the service password and the
// database DSN. Sorted by name.
func (w wiring) secretEnv() []envVar {
	s := &w.glance.Spec
	env := []envVar{
		{v1alpha1.EnvKeystonePassword, s.ServiceUser.SecretRef.Name, s.ServiceUser.SecretRef.Key, false},
		{v1alpha1.EnvDatabaseConnection, s.Database.SecretRef.Name, s.Database.SecretRef.Key, false},
	}
	for _, b := range w.backends {
		access, secret := v1alpha1.StoreEnvNames(b.Name)
		ref := b.Spec.S3.CredentialsSecretRef.Name
		env = append(env,
			envVar{access, ref, v1alpha1.CredentialsAccessKeyID, true},
			envVar{secret, ref, v1alpha1.CredentialsSecretAccessKey, true})
	}
	slices.SortFunc(env, func(a, b envVar) int { return strings.Compare(a.name, b.name) })
	return env
}

// setSecretEnv drops every variable glance-krm manages (including those of
// stores that are gone) and appends the current set after the user's own.
func setSecretEnv(c *yaml.RNode, env []envVar) error {
	list, err := c.Pipe(yaml.LookupCreate(yaml.SequenceNode, "env"))
	if err != nil {
		return err
	}
	elems, err := list.Elements()
	if err != nil {
		return err
	}
	var keep []*yaml.Node
	for _, e := range elems {
		if f := e.Field("name"); f != nil && isManagedEnv(f.Value.YNode().Value) {
			continue
		}
		keep = append(keep, e.YNode())
	}
	for _, e := range env {
		ref := mapping("key", e.key, "name", e.secret)
		if e.optional {
			ref.Content = append(ref.Content, str("optional"), value(true))
		}
		keep = append(keep, mapping("name", e.name, "valueFrom", mapping("secretKeyRef", ref)))
	}
	list.YNode().Content = keep
	return nil
}

func isManagedEnv(name string) bool {
	return name == v1alpha1.EnvKeystonePassword || name == v1alpha1.EnvDatabaseConnection ||
		v1alpha1.IsStoreCredentialEnv(name)
}
