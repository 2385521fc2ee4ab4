package glancekrm

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kptdev/krm-functions-sdk/go/fn"

	"github.com/c5c3/glance-krm/fn/findings"
	"github.com/c5c3/glance-krm/fn/glancekrm/decode"
	"github.com/c5c3/glance-krm/fn/glancekrm/kimages"
	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

// Version is the release this binary belongs to; the credentials init
// container runs the function image of the same release by default.
const Version = "v0.1.0"

// DefaultCredentialsImage is the image of the credentials init container:
// the function's own image, which carries the credentials subcommand.
const DefaultCredentialsImage = "ghcr.io/c5c3/glance-krm-fn:" + Version

// The functionConfig the function understands: a RenderGlanceConfig (the
// kustomize transformer's own object), or a ConfigMap (kpt's configMap:
// in a Kptfile), or none.
const (
	ConfigAPIVersion = "fn.glance.openstack.c5c3.io/v1alpha1"
	ConfigKind       = "RenderGlanceConfig"
)

// config holds the function's options.
type config struct {
	// credentialsImage is the image of the credentials init container; a
	// registry mirror or a digest pin of the default goes here.
	credentialsImage string
	// generate is whether a Glance without a hand-written workload gets
	// the seed operator's workload generated (workloads: generate, the
	// default) or only its rendered files (workloads: none), for a
	// workload kept in another build.
	generate bool
	// images are the images: of the kustomization that runs the function
	// (kustomizeImages); nil when there are none to follow.
	images *kimages.Images
}

// configFields are the options by name, as spec.<name> of a
// RenderGlanceConfig or data.<name> of a ConfigMap (decode.ConfigSpec).
var configFields = []string{"credentialsImage", "workloads"}

// readConfig decodes the functionConfig strictly (decode.Config) and
// reports every field it does not understand: a misspelt option silently
// ignored would be a setting lost.
func readConfig(fc *fn.KubeObject) (config, []findings.Finding) {
	c := config{credentialsImage: DefaultCredentialsImage, generate: true}
	if fc == nil || (fc.GetKind() == "" && fc.GetAPIVersion() == "") {
		return c, nil
	}
	var section string
	switch {
	case fc.GetAPIVersion() == ConfigAPIVersion && fc.GetKind() == ConfigKind:
		section = "spec"
	case fc.GetAPIVersion() == "v1" && fc.GetKind() == "ConfigMap":
		section = "data"
	default:
		return c, []findings.Finding{findings.General(findings.Error, ruleConfig, fmt.Sprintf(
			"functionConfig %s %s is not understood: use apiVersion %s, kind %s (or a ConfigMap under kpt)",
			fc.GetAPIVersion(), fc.GetKind(), ConfigAPIVersion, ConfigKind))}
	}
	spec, problems, err := decode.Config(fc, section)
	if err != nil {
		return c, []findings.Finding{findings.General(findings.Error, ruleConfig, fmt.Sprintf("functionConfig cannot be decoded: %v", err))}
	}
	var rs []findings.Finding
	for _, f := range slices.Sorted(slices.Values(problems.Unknown)) {
		rs = append(rs, findings.General(findings.Error, ruleConfig, fmt.Sprintf(
			"functionConfig field %s is not understood (known: %s.%s)", f, section, strings.Join(configFields, ", "+section+"."))).At(f))
	}
	if problems.WrongType != "" {
		rs = append(rs, configError(problems.WrongType, "must be a string"))
	}
	if v := spec.CredentialsImage; v != "" {
		if problem := v1alpha1.ImageReferenceProblem(v); problem != "" {
			rs = append(rs, configError(section+".credentialsImage", "the credentials init container's image "+problem))
		} else {
			c.credentialsImage = v
		}
	}
	switch spec.Workloads {
	case "generate", "":
	case "none":
		c.generate = false
	default:
		rs = append(rs, configError(section+".workloads", fmt.Sprintf("%q is not supported: use generate (the default) or none", spec.Workloads)))
	}
	return c, rs
}

// ruleConfig is the rule of every functionConfig finding.
const ruleConfig = "function-config"

// configError is a known functionConfig field with a value it cannot take.
func configError(path, msg string) findings.Finding {
	return findings.General(findings.Error, ruleConfig, fmt.Sprintf("functionConfig field %s: %s", path, msg)).At(path)
}
