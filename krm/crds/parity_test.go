package crds_test

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/c5c3/glance-krm/krm/crds"
)

// The seed system's schema (krm/testdata/seed, C5C3/cobaltcore at
// da0515f0) is the contract: every field of it must exist here with the
// same type, enum, bounds, pattern, default, required list and CEL rules.
// Where ours differs, the difference is listed below with its reason; a
// difference that is not listed fails the test, and so does a listed one
// that no longer exists.
var justified = map[string]string{
	// A seed webhook default is a CRD default here: glance-krm has no
	// webhook, and the API server's default is what the function applies.
	".spec.apis extra":                              "glance-krm's extension: several Image APIs per Glance (issue 13); unset means the seed's one API",
	".spec.catalogAPI extra":                        "glance-krm's extension: the API the stable Service selects",
	".spec.imageSignatureVerification extra":        "glance-krm's extension: signature verification through barbican",
	".spec.metadefWrites extra":                     "glance-krm's extension: who may write metadef objects",
	".spec.cache required":                          "backend: webhook-defaulted in the seed, a CRD default here",
	".spec.cache.backend default":                   "webhook default dogpile.cache.pymemcache",
	".spec.serviceUser.username default":            "webhook default glance",
	".spec.deployment default":                      "the webhook defaults replicas on every Glance: {} lets the CRD's nested default apply",
	".spec.logging default":                         "the webhook materializes logging (text, INFO) on every Glance",
	".spec.serviceUser.projectName default":         "webhook default service",
	".spec.serviceUser.userDomainName default":      "webhook default Default",
	".spec.serviceUser.projectDomainName default":   "webhook default Default",
	".spec.serviceUser.secretRef.key default":       "webhook default password",
	".spec.serviceUser.username minLength":          "an empty value the webhook would default is defaulted by the CRD; empty after that is a broken INI value",
	".spec.serviceUser.projectName minLength":       "as username",
	".spec.serviceUser.userDomainName minLength":    "as username",
	".spec.serviceUser.projectDomainName minLength": "as username",
	".spec.serviceUser.secretRef.key minLength":     "an empty key cannot be projected",
	".spec.serviceUser.username maxLength":          "Keystone's own limit (255)",
	".spec.serviceUser.projectName maxLength":       "Keystone's own limit (255)",
	".spec.serviceUser.userDomainName maxLength":    "Keystone's own limit (255)",
	".spec.serviceUser.projectDomainName maxLength": "Keystone's own limit (255)",
	".spec.keystoneEndpoint maxLength":              "bounds the rendered file",
	".spec.keystonePublicEndpoint maxLength":        "bounds the rendered file",
	".spec.region maxLength":                        "bounds the rendered file",
	".spec.cache.servers maxItems":                  "bounds the rendered file",
	".spec.cache.servers[] pattern":                 "host:port, the form memcached_servers reads; the seed's no-newline pattern is implied",
	".spec.extraConfig maxProperties":               "bounds the ConfigMap (1 MiB) and the CEL cost",
	".spec.extraConfig{} maxProperties":             "bounds the ConfigMap (1 MiB) and the CEL cost",
	".spec.extraConfig{}{} maxLength":               "bounds the ConfigMap (1 MiB) and the CEL cost",
	".spec.middleware[].name minLength":             "the seed's renderer refuses an empty name; refused at admission here",
	".spec.middleware[].filterFactory minLength":    "the seed's renderer refuses an empty factory; refused at admission here",
	".spec.plugins[].name minLength":                "the seed's renderer refuses an empty name; refused at admission here",
	".spec.plugins[].configSection minLength":       "the seed's renderer refuses an empty section; refused at admission here",
	"GlanceBackend .spec.isDefault default":         "false, what an absent bool means",
	"GlanceBackend .spec.extraOptions{} maxLength":  "the seed's CEL size rule, written as OpenAPI bounds",
	"GlanceBackend .spec.s3.bucket maxLength":       "S3's own limit (255 here, 63 for a DNS label)",
	"GlanceBackend .spec.s3.host maxLength":         "bounds the rendered file",
	"GlanceBackend .spec.s3.region maxLength":       "bounds the rendered file",
	"GlanceBackend .spec rules":                     "the seed's immutability rules on .spec are on the fields themselves here (same verdicts)",
	"GlanceBackend .spec.extraOptions rules":        "the seed's size rule is OpenAPI maxLength here (same verdicts)",
	"GlanceBackend .spec.s3.caBundleRef extra":      "glance-krm extension (optional): a private CA for the S3 endpoint",
	"GlanceBackend .spec.s3.caBundleRef.kind extra": "glance-krm extension",
	"GlanceBackend .spec.s3.caBundleRef.name extra": "glance-krm extension",
	"GlanceBackend .spec.s3.caBundleRef.key extra":  "glance-krm extension",
	".spec.apiServer.uwsgi.threads default":         "16, not the seed's 1: an image transfer holds a uWSGI thread throughout, and 2 × 1 served two transfers while the probes waited (docs/design.md, concurrency)",
	"Glance  required":                              "spec is required here, as every Glance needs one",
	// The seed's newer schema (C5C3/cobaltcore internal/common/types/
	// workload.go at 043a72e, issue 37): its generated CRD is not
	// available, so these fields are held to its markers in
	// TestNewerSeedMarkers instead.
	".spec.deployment.verticalAutoscaling extra":        "the seed's newer DeploymentSpec: a VerticalPodAutoscaler per Image API",
	".spec.deployment.nodeSelector extra":               "the seed's newer DeploymentSpec: NodePlacementSpec, inline",
	".spec.deployment.tolerations extra":                "the seed's newer DeploymentSpec: NodePlacementSpec, inline",
	".spec.deployment.affinity extra":                   "the seed's newer DeploymentSpec: NodePlacementSpec, inline",
	".spec.serviceUser.applicationCredential extra":     "glance-krm's extension (optional), after RHOSO's glance-operator: the service user authenticates with an application credential",
	".spec.imageCache.maintenanceResources extra":       "the seed's newer ImageCacheSpec: the cache-maintenance container's resources (its webhook at 177d145 checks them)",
	".spec.jobs extra":                                  "the seed's newer GlanceSpec: JobSpec (resources, priorityClassName, placement) for the Jobs and CronJob",
	".spec.autoscaling.behavior extra":                  "the seed's newer AutoscalingSpec: the HPA's behavior, copied as written",
	".spec.autoscaling.targetCPUUtilization maximum":    "the seed's newer AutoscalingSpec has no maximum: above 100 is valid where a container may use more than it requests",
	".spec.autoscaling.targetMemoryUtilization maximum": "as targetCPUUtilization",
	"GlanceBackend  required":                           "spec is required here, as every GlanceBackend needs one",
}

var compared = []string{"type", "enum", "minimum", "maximum", "minLength", "maxLength", "pattern", "default",
	"minItems", "maxItems", "minProperties", "maxProperties", "format", "x-kubernetes-list-type",
	"x-kubernetes-list-map-keys", "x-kubernetes-int-or-string", "x-kubernetes-preserve-unknown-fields",
	"x-kubernetes-embedded-resource"}

func schemaOf(t *testing.T, b []byte) (string, map[string]map[string]any) {
	t.Helper()
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.Unmarshal(b, &crd); err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(crd.Spec.Versions[0].Schema.OpenAPIV3Schema)
	if err != nil {
		t.Fatal(err)
	}
	var root map[string]any
	if err := json.Unmarshal(raw, &root); err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]any{}
	var walk func(s map[string]any, path string)
	walk = func(s map[string]any, path string) {
		out[path] = s
		if props, ok := s["properties"].(map[string]any); ok {
			for k, v := range props {
				walk(v.(map[string]any), path+"."+k)
			}
		}
		if items, ok := s["items"].(map[string]any); ok {
			walk(items, path+"[]")
		}
		if ap, ok := s["additionalProperties"].(map[string]any); ok {
			walk(ap, path+"{}")
		}
	}
	walk(root, "")
	return crd.Spec.Names.Kind, out
}

func rules(s map[string]any) []string {
	var out []string
	list, _ := s["x-kubernetes-validations"].([]any)
	for _, r := range list {
		out = append(out, fmt.Sprint(r.(map[string]any)["rule"]))
	}
	return out
}

func strs(v any) []string {
	var out []string
	list, _ := v.([]any)
	for _, x := range list {
		out = append(out, fmt.Sprint(x))
	}
	sort.Strings(out)
	return out
}

// schemaDiff lists every difference of ours from the seed's, keyed as the
// justified map is.
func schemaDiff(kind string, seed, ours map[string]map[string]any) map[string]string {
	prefix := ""
	if kind == "GlanceBackend" {
		prefix = "GlanceBackend "
	}
	if kind == "Glance" {
		prefix = ""
	}
	diffs := map[string]string{}
	for path, s := range seed {
		o, ok := ours[path]
		if !ok {
			diffs[prefix+path+" missing"] = "field of the seed schema is missing"
			continue
		}
		for _, k := range compared {
			if !reflect.DeepEqual(s[k], o[k]) {
				diffs[prefix+path+" "+k] = fmt.Sprintf("seed %v, ours %v", s[k], o[k])
			}
		}
		ourRules := rules(o)
		for _, r := range rules(s) {
			if !slices.Contains(ourRules, r) {
				diffs[prefix+path+" rules"] = "CEL rule missing: " + r
			}
		}
		if !slices.Equal(strs(s["required"]), strs(o["required"])) {
			key := prefix + path + " required"
			if path == "" {
				key = kind + "  required"
			}
			diffs[key] = fmt.Sprintf("seed %v, ours %v", strs(s["required"]), strs(o["required"]))
		}
	}
	for path := range ours {
		if _, ok := seed[path]; !ok {
			diffs[prefix+path+" extra"] = "not in the seed schema"
		}
	}
	return diffs
}

func TestSchemaParityWithSeed(t *testing.T) {
	seen := map[string]bool{}
	for _, file := range []string{"glance.openstack.c5c3.io_glances.yaml", "glance.openstack.c5c3.io_glancebackends.yaml"} {
		seedRaw, err := os.ReadFile("../testdata/seed/crds/" + file)
		if err != nil {
			t.Fatal(err)
		}
		oursRaw, err := crds.FS.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		kind, seed := schemaOf(t, seedRaw)
		_, ours := schemaOf(t, oursRaw)
		for key, what := range schemaDiff(kind, seed, ours) {
			seen[key] = true
			if _, ok := justified[key]; !ok && !underExtension(key) {
				t.Errorf("%s: %s (match the seed, or justify the difference in this test)", key, what)
			}
		}
	}
	for key := range justified {
		if !seen[key] {
			t.Errorf("%s is listed as a justified difference but there is none: remove it", key)
		}
	}
}

// underExtension tells a field inside one of glance-krm's own fields,
// which the justification of that field covers.
func underExtension(key string) bool {
	path, ok := strings.CutSuffix(key, " extra")
	if !ok {
		return false
	}
	for j := range justified {
		if ext, ok := strings.CutSuffix(j, " extra"); ok && (strings.HasPrefix(path, ext+".") || strings.HasPrefix(path, ext+"[") || strings.HasPrefix(path, ext+"{")) {
			return true
		}
	}
	return false
}

// TestNewerSeedMarkers holds the fields of the seed's newer schema
// (workload.go at 043a72e; InPlaceOrRecreate from its invalid-cr 40 at
// cad4a5c) to the markers written there, since the seed's
// generated CRD of that version is not available to compare with.
func TestNewerSeedMarkers(t *testing.T) {
	raw, err := crds.FS.ReadFile("glance.openstack.c5c3.io_glances.yaml")
	if err != nil {
		t.Fatal(err)
	}
	_, ours := schemaOf(t, raw)
	want := []struct {
		path, key string
		value     any
	}{
		{".spec.deployment.verticalAutoscaling.updateMode", "enum", []any{"Off", "Initial", "Recreate", "InPlaceOrRecreate", "Auto"}},
		{".spec.deployment.verticalAutoscaling.minReplicas", "minimum", float64(1)},
		{".spec.deployment.verticalAutoscaling.minAllowed", "maxProperties", float64(2)},
		{".spec.deployment.verticalAutoscaling.maxAllowed", "maxProperties", float64(2)},
		{".spec.deployment.verticalAutoscaling.minAllowed", "type", "object"},
		{".spec.deployment.verticalAutoscaling", "required", []any{"updateMode"}},
		{".spec.deployment.nodeSelector", "type", "object"},
		{".spec.deployment.tolerations", "type", "array"},
		{".spec.deployment.affinity.nodeAffinity", "type", "object"},
		{".spec.autoscaling.behavior.scaleDown.stabilizationWindowSeconds", "type", "integer"},
		{".spec.autoscaling.behavior.scaleUp.tolerance", "x-kubernetes-int-or-string", true},
		{".spec.autoscaling.targetCPUUtilization", "minimum", float64(1)},
		{".spec.jobs.priorityClassName", "type", "string"},
		{".spec.jobs.resources.limits", "type", "object"},
		{".spec.jobs.nodeSelector", "type", "object"},
		{".spec.jobs.tolerations", "type", "array"},
		{".spec.jobs.affinity.nodeAffinity", "type", "object"},
		{".spec.imageCache.maintenanceResources.requests", "type", "object"},
	}
	for _, w := range want {
		s, ok := ours[w.path]
		if !ok {
			t.Errorf("%s: missing", w.path)
			continue
		}
		if !reflect.DeepEqual(s[w.key], w.value) {
			t.Errorf("%s %s: %v, the seed's newer marker says %v", w.path, w.key, s[w.key], w.value)
		}
	}
	got := rules(ours[".spec.deployment.verticalAutoscaling"])
	for _, r := range []string{
		"!has(self.minAllowed) || self.minAllowed.all(k, k in ['cpu','memory'])",
		"!has(self.maxAllowed) || self.maxAllowed.all(k, k in ['cpu','memory'])",
	} {
		if !slices.Contains(got, r) {
			t.Errorf(".spec.deployment.verticalAutoscaling: CEL rule missing: %s", r)
		}
	}
}
