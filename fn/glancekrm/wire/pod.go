package wire

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/c5c3/glance-krm/fn/glancekrm/ynode"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/c5c3/glance-krm/fn/credentials"
	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

// The pod-level objects glance-krm owns all carry the glance-krm- prefix;
// it replaces them whole on every run and touches no other volume, mount
// or container.

// setVolumes writes glance-krm's three volumes, replacing earlier copies of
// them and the unprefixed config/backends volumes an earlier glance-krm
// wrote, in place, so a re-run does not reorder the user's volumes.
func (w Wiring) setVolumes(pod *yaml.RNode, legacy map[string]bool) error {
	vols, err := pod.Pipe(yaml.LookupCreate(yaml.SequenceNode, "volumes"))
	if err != nil {
		return err
	}
	ours := map[string]*yaml.Node{
		v1alpha1.VolumeConfig:        ynode.Mapping("name", v1alpha1.VolumeConfig, "projected", ynode.Mapping("sources", w.configSources())),
		v1alpha1.VolumeCredentials:   ynode.Mapping("emptyDir", ynode.Mapping("medium", "Memory", "sizeLimit", v1alpha1.CredentialsVolumeSize), "name", v1alpha1.VolumeCredentials),
		v1alpha1.VolumeCredentialsIn: ynode.Mapping("name", v1alpha1.VolumeCredentialsIn, "projected", ynode.Mapping("sources", w.credentialSources())),
	}
	return replaceNamed(vols, ours, []string{v1alpha1.VolumeConfig, v1alpha1.VolumeCredentials, v1alpha1.VolumeCredentialsIn},
		func(name string) bool { return legacy[name] })
}

// replaceNamed replaces, in a list of named items, each of ours in place,
// drops the stale ones, and appends the ones not there yet in order.
func replaceNamed(list *yaml.RNode, ours map[string]*yaml.Node, order []string, stale func(string) bool) error {
	var out []*yaml.Node
	placed := map[string]bool{}
	for _, n := range list.YNode().Content {
		name := ynode.String(yaml.NewRNode(n), "name")
		switch {
		case ours[name] != nil:
			if !placed[name] {
				out = append(out, ours[name])
				placed[name] = true
			}
		case stale(name) || strings.HasPrefix(name, v1alpha1.ReservedPrefix):
		default:
			out = append(out, n)
		}
	}
	for _, name := range order {
		if !placed[name] {
			out = append(out, ours[name])
		}
	}
	list.YNode().Content = out
	return nil
}

// configSources are the rendered ConfigMap and Secret, then each store's
// CA bundle at the path its s3_store_cacert names (a sub-directory, which
// oslo.config does not read as configuration).
func (w Wiring) configSources() *yaml.Node {
	sources := ynode.Seq(ynode.Mapping("configMap", ynode.Mapping("name", w.ConfigMap)), ynode.Mapping("secret", ynode.Mapping("name", w.BackendsSecret)))
	for _, b := range w.Backends {
		ref := b.Spec.S3.CABundleRef
		if ref == nil {
			continue
		}
		kind := "secret"
		if ref.Kind == "ConfigMap" {
			kind = "configMap"
		}
		path := strings.TrimPrefix(v1alpha1.CABundlePath(b.Name), v1alpha1.MountConfigDir)
		sources.Content = append(sources.Content, ynode.Mapping(kind, ynode.Mapping("items", ynode.Seq(ynode.Mapping("key", ref.Key, "path", path)), "name", ref.Name)))
	}
	if tls := w.Glance.Spec.Database.TLS; tls != nil && tls.Mode != "" && tls.Mode != "disabled" {
		sources.Content = append(sources.Content,
			ynode.Mapping("secret", ynode.Mapping("items", ynode.Seq(ynode.Mapping("key", cmp.Or(tls.CABundleSecretRef.Key, credentials.TLSCAFile), "path", credentials.TLSDir+credentials.TLSCAFile)), "name", tls.CABundleSecretRef.Name)),
			ynode.Mapping("secret", ynode.Mapping("items", ynode.Seq(ynode.Mapping("key", credentials.TLSCertFile, "path", credentials.TLSDir+credentials.TLSCertFile), ynode.Mapping("key", credentials.TLSKeyFile, "path", credentials.TLSDir+credentials.TLSKeyFile)), "name", tls.ClientCertSecretRef.Name)))
	}
	return sources
}

// credentialSources is the projected volume the init container reads: one
// source per Secret reference, each key at <kind>/<section>/<option>. The
// stores' sources are optional, so a missing Secret or key disables one
// store instead of keeping the pod from starting; the database and service
// password are required, as glance-api cannot run without them.
func (w Wiring) credentialSources() *yaml.Node {
	s := &w.Glance.Spec
	src := func(secret string, optional bool, items ...*yaml.Node) *yaml.Node {
		sec := ynode.Mapping("items", &yaml.Node{Kind: yaml.SequenceNode, Tag: yaml.NodeTagSeq, Content: items}, "name", secret)
		if optional {
			sec.Content = append(sec.Content, ynode.Str("optional"), ynode.Value(true))
		}
		return ynode.Mapping("secret", sec)
	}
	item := func(key, path string) *yaml.Node { return ynode.Mapping("key", key, "path", path) }
	sources := []*yaml.Node{src(s.Database.SecretRef.Name, false, w.databaseItems()...)}
	if ac := s.ServiceUser.ApplicationCredential; ac != nil {
		sources = append(sources, src(ac.SecretRef.Name, false,
			item(ac.SecretRef.IDKey, credentials.Path(true, v1alpha1.SectionKeystone, v1alpha1.OptionKeystoneACID)),
			item(ac.SecretRef.SecretKey, credentials.Path(true, v1alpha1.SectionKeystone, v1alpha1.OptionKeystoneACSecret))))
	} else {
		sources = append(sources, src(s.ServiceUser.SecretRef.Name, false, item(s.ServiceUser.SecretRef.Key, credentials.Path(true, v1alpha1.SectionKeystone, v1alpha1.OptionKeystonePass))))
	}
	for _, b := range w.Backends {
		sources = append(sources, src(b.Spec.S3.CredentialsSecretRef.Name, true,
			item(v1alpha1.CredentialsAccessKeyID, credentials.Path(false, b.Name, v1alpha1.OptionS3AccessKey)),
			item(v1alpha1.CredentialsSecretAccessKey, credentials.Path(false, b.Name, v1alpha1.OptionS3SecretKey))))
	}
	return &yaml.Node{Kind: yaml.SequenceNode, Tag: yaml.NodeTagSeq, Content: sources}
}

// databaseItems are the keys the connection is composed from.
func (w Wiring) databaseItems() []*yaml.Node {
	items := []*yaml.Node{ynode.Mapping("key", credentials.PasswordKey, "path", credentials.DatabaseDir+"/"+credentials.PasswordKey)}
	if w.Glance.Spec.Database.UsernameFromSecret() {
		items = append(items, ynode.Mapping("key", credentials.UsernameKey, "path", credentials.DatabaseDir+"/"+credentials.UsernameKey))
	}
	return items
}

// credentialOptions is every option the credentials file carries, by the
// variable that would override it.
func (w Wiring) credentialOptions() map[string]string {
	out := map[string]string{
		v1alpha1.OptionEnvName(v1alpha1.SectionDatabase, v1alpha1.OptionDatabaseConnect): "[database] connection (spec.database.secretRef)",
		v1alpha1.OptionEnvName(v1alpha1.SectionKeystone, v1alpha1.OptionKeystonePass):    "[keystone_authtoken] password (spec.serviceUser.secretRef)",
	}
	if w.Glance.Spec.ServiceUser.ApplicationCredential != nil {
		for _, o := range []string{v1alpha1.OptionKeystoneACID, v1alpha1.OptionKeystoneACSecret} {
			out[v1alpha1.OptionEnvName(v1alpha1.SectionKeystone, o)] = "[keystone_authtoken] " + o + " (spec.serviceUser.applicationCredential)"
		}
	}
	for _, b := range w.Backends {
		for _, o := range []string{v1alpha1.OptionS3AccessKey, v1alpha1.OptionS3SecretKey} {
			out[v1alpha1.OptionEnvName(b.Name, o)] = fmt.Sprintf("[%s] %s (GlanceBackend %s spec.s3.credentialsSecretRef)", b.Name, o, b.Name)
		}
	}
	return out
}

// findInit is the credentials init container, if an earlier run wrote it.
func (w Wiring) findInit(pod *yaml.RNode) (*yaml.RNode, error) {
	list, err := pod.Pipe(yaml.Lookup("initContainers"))
	if err != nil || list == nil {
		return nil, err
	}
	return list.Pipe(yaml.MatchElement("name", v1alpha1.CredentialsContainer))
}

// initContainer runs the function image's credentials subcommand under the
// restricted Pod Security profile.
func (w Wiring) initContainer(image string) *yaml.Node {
	args := &yaml.Node{Kind: yaml.SequenceNode, Tag: yaml.NodeTagSeq, Content: []*yaml.Node{
		ynode.Str("credentials"), ynode.Str("--from"), ynode.Str(v1alpha1.MountCredentialsIn),
		ynode.Str("--to"), ynode.Str(v1alpha1.MountCredentialsDir + v1alpha1.CredentialsFile),
	}}
	for _, a := range credentials.TargetOf(w.Glance).Args() {
		args.Content = append(args.Content, ynode.Str(a))
	}
	return ynode.Mapping(
		"args", args,
		"env", ynode.Seq(ynode.Mapping("name", credentials.PodNamespace, "valueFrom", ynode.Mapping("fieldRef", ynode.Mapping("fieldPath", "metadata.namespace")))),
		"image", image,
		"name", v1alpha1.CredentialsContainer,
		"resources", ynode.Mapping("limits", ynode.Mapping("memory", "64Mi"), "requests", ynode.Mapping("cpu", "10m", "memory", "16Mi")),
		"securityContext", ynode.Mapping(
			"allowPrivilegeEscalation", false,
			"capabilities", ynode.Mapping("drop", &yaml.Node{Kind: yaml.SequenceNode, Tag: yaml.NodeTagSeq, Content: []*yaml.Node{ynode.Str("ALL")}}),
			"readOnlyRootFilesystem", true,
			"runAsNonRoot", true,
			"seccompProfile", ynode.Mapping("type", "RuntimeDefault")),
		"volumeMounts", &yaml.Node{Kind: yaml.SequenceNode, Tag: yaml.NodeTagSeq, Content: []*yaml.Node{
			ynode.Mapping("mountPath", v1alpha1.MountCredentialsIn, "name", v1alpha1.VolumeCredentialsIn, "readOnly", true),
			ynode.Mapping("mountPath", v1alpha1.MountCredentialsDir, "name", v1alpha1.VolumeCredentials),
		}},
	)
}

func setInitContainer(pod *yaml.RNode, c *yaml.Node) error {
	list, err := pod.Pipe(yaml.LookupCreate(yaml.SequenceNode, "initContainers"))
	if err != nil {
		return err
	}
	return replaceNamed(list, map[string]*yaml.Node{v1alpha1.CredentialsContainer: c}, []string{v1alpha1.CredentialsContainer},
		func(string) bool { return false })
}

// setMounts mounts glance-krm's volumes read-only into the glance-api
// container at dirs (the credentials may be mounted twice), replacing its
// earlier mounts of them in place and keeping the user's.
func setMounts(c *yaml.RNode, legacy map[string]bool, dirs []string) error {
	list, err := c.Pipe(yaml.LookupCreate(yaml.SequenceNode, "volumeMounts"))
	if err != nil {
		return err
	}
	var ours []*yaml.Node
	for _, d := range dirs {
		ours = append(ours, ynode.Mapping("mountPath", d, "name", ourVolumeAt(d), "readOnly", true))
	}
	var out []*yaml.Node
	placed := false
	for _, n := range list.YNode().Content {
		name := ynode.String(yaml.NewRNode(n), "name")
		if legacy[name] || strings.HasPrefix(name, v1alpha1.ReservedPrefix) {
			if !placed {
				out, placed = append(out, ours...), true
			}
			continue
		}
		out = append(out, n)
	}
	if !placed {
		out = append(out, ours...)
	}
	list.YNode().Content = out
	return nil
}
