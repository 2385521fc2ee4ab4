package wire

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/c5c3/glance-krm/fn/glancekrm/ynode"
	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

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
