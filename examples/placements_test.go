package examples_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gopkg.in/ini.v1"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

// A placement is where the function and one of kustomize's own
// transformers sit: the function in the base, in the overlay, or in both;
// the transformer in the base or the overlay. Each builds with the real
// kustomize from examples/standalone's objects (plus an unrelated
// memcached Deployment) and must give self-consistent output, or fail
// with a message that says which placement to use.
type placement struct {
	fnIn        string // base, overlay or both
	base        string // extra kustomization fields of the base
	overlay     string // extra kustomization fields of the overlay
	fail        string // the build must fail with this in its stderr
	check       func(t *testing.T, out []*yaml.RNode)
	inconsitent string // a documented limitation: what goes wrong, checked to still hold
	noConfig    bool   // the base does not declare fn/kustomize/kustomizeconfig.yaml
}

const memcached = `apiVersion: apps/v1
kind: Deployment
metadata: {name: memcached}
spec:
  selector: {matchLabels: {app: memcached}}
  template:
    metadata: {labels: {app: memcached}}
    spec:
      containers: [{name: memcached, image: memcached:1.6}]
`

func TestPlacements(t *testing.T) {
	digest := "sha256:" + strings.Repeat("b", 64)
	cases := map[string]placement{
		"namespace in the same kustomization": {fnIn: "overlay", overlay: "namespace: other\n",
			check: func(t *testing.T, out []*yaml.RNode) { wantNamespace(t, out, "other") }},
		"namePrefix in the same kustomization": {fnIn: "overlay", overlay: "namePrefix: p-\n",
			check: func(t *testing.T, out []*yaml.RNode) { wantStores(t, out, "p-glance", "p-primary", "p-secondary") }},
		"namePrefix in the same kustomization, without our configurations": {fnIn: "overlay", overlay: "namePrefix: p-\n", noConfig: true,
			check: func(t *testing.T, out []*yaml.RNode) { wantStores(t, out, "p-glance", "p-primary", "p-secondary") }},
		"nameSuffix in the same kustomization": {fnIn: "overlay", overlay: "nameSuffix: -s\n",
			check: func(t *testing.T, out []*yaml.RNode) { wantStores(t, out, "glance-s", "primary-s", "secondary-s") }},
		"labels spreading the glance label in the same kustomization": {fnIn: "overlay",
			overlay: "labels:\n- pairs: {glance.openstack.c5c3.io/glance: glance}\n",
			check:   func(t *testing.T, out []*yaml.RNode) { wantUntouched(t, out, "memcached") }},
		"commonLabels in the same kustomization": {fnIn: "overlay", overlay: "commonLabels: {team: images}\n"},
		"images: mirror in the same kustomization": {fnIn: "overlay",
			overlay: "images:\n- {name: ghcr.io/c5c3/glance, newName: mirror.local/c5c3/glance}\n- {name: ghcr.io/c5c3/glance-krm-fn, newName: mirror.local/c5c3/glance-krm-fn}\n",
			check: func(t *testing.T, out []*yaml.RNode) {
				wantImage(t, out, "mirror.local/c5c3/glance:2025.2")
				wantInitImage(t, out, "mirror.local/c5c3/glance-krm-fn:v0.1.0")
			}},
		"images: a tag of another release in the same kustomization fails": {fnIn: "overlay",
			overlay: "images:\n- {name: ghcr.io/c5c3/glance, newTag: \"2026.1\"}\n",
			fail:    "ImageReleaseMismatch: the images: of "},
		"images: digest pin in the same kustomization": {fnIn: "overlay",
			overlay: "images:\n- {name: ghcr.io/c5c3/glance, digest: " + digest + "}\n",
			check:   func(t *testing.T, out []*yaml.RNode) { wantImage(t, out, "ghcr.io/c5c3/glance@"+digest) }},
		"patches to the Deployment in the same kustomization": {fnIn: "overlay",
			overlay: "patches:\n- target: {kind: Deployment, name: glance}\n  patch: '[{\"op\": \"replace\", \"path\": \"/spec/replicas\", \"value\": 5}]'\n"},
		"patches to a GlanceBackend in the same kustomization": {fnIn: "overlay", overlay: bucketPatch,
			check: func(t *testing.T, out []*yaml.RNode) { wantBucket(t, out, "patched-bucket") }},
		"a secretGenerator for the credentials in the same kustomization": {fnIn: "overlay",
			overlay: "secretGenerator:\n- {name: garage-s3-credentials, literals: [access-key-id=a, secret-access-key=b]}\n"},
		"function in the base, namespace in the overlay": {fnIn: "base", overlay: "namespace: other\n",
			check: func(t *testing.T, out []*yaml.RNode) { wantNamespace(t, out, "other") }},
		"function in the base, images: mirror in the overlay": {fnIn: "base",
			overlay: "images:\n- {name: ghcr.io/c5c3/glance, newName: mirror.local/c5c3/glance}\n- {name: ghcr.io/c5c3/glance-krm-fn, newName: mirror.local/c5c3/glance-krm-fn}\n",
			check: func(t *testing.T, out []*yaml.RNode) {
				wantImage(t, out, "mirror.local/c5c3/glance:2025.2")
				wantInitImage(t, out, "mirror.local/c5c3/glance-krm-fn:v0.1.0")
			}},
		"function in the base, images: digest pin in the overlay": {fnIn: "base",
			overlay: "images:\n- {name: ghcr.io/c5c3/glance, digest: " + digest + "}\n",
			check:   func(t *testing.T, out []*yaml.RNode) { wantImage(t, out, "ghcr.io/c5c3/glance@"+digest) }},
		"function in the base, commonLabels in the overlay": {fnIn: "base", overlay: "commonLabels: {team: images}\n"},
		"function in the base, namePrefix in the base": {fnIn: "base", base: "namePrefix: p-\n",
			check: func(t *testing.T, out []*yaml.RNode) { wantStores(t, out, "p-glance", "p-primary", "p-secondary") }},
		"function in the base, namePrefix in the overlay (documented limitation)": {fnIn: "base", overlay: "namePrefix: p-\n",
			inconsitent: "the store sections keep the base's names while the GlanceBackends are renamed"},
		"function in the overlay, namePrefix in the base": {fnIn: "overlay", base: "namePrefix: p-\n",
			check: func(t *testing.T, out []*yaml.RNode) { wantStores(t, out, "p-glance", "p-primary", "p-secondary") }},
		"function in both, namePrefix in the overlay": {fnIn: "both", overlay: "namePrefix: p-\n",
			check: func(t *testing.T, out []*yaml.RNode) { wantStores(t, out, "p-glance", "p-primary", "p-secondary") }},
		"function in both, a GlanceBackend patched in the overlay": {fnIn: "both", overlay: bucketPatch,
			check: func(t *testing.T, out []*yaml.RNode) { wantBucket(t, out, "patched-bucket") }},
		"function in both, managed-by relabelled in the overlay": {fnIn: "both",
			overlay: "labels:\n- pairs: {app.kubernetes.io/managed-by: argocd}\n"},
		"function in both, images: mirror in the overlay": {fnIn: "both",
			overlay: "images:\n- {name: ghcr.io/c5c3/glance, newName: mirror.local/c5c3/glance}\n",
			check:   func(t *testing.T, out []*yaml.RNode) { wantImage(t, out, "mirror.local/c5c3/glance:2025.2") }},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			dir := placementTree(t, c)
			overlay := filepath.Join(dir, "overlay")
			out := buildVerdict(t, overlay, c.fail, func(err error, stderr string) { validateAgrees(t, overlay, err, stderr) })
			if out == nil {
				return
			}
			problems := consistency(t, out)
			if c.inconsitent != "" {
				if len(problems) == 0 {
					t.Fatalf("documented as inconsistent (%s), but the output is consistent: update README", c.inconsitent)
				}
				return
			}
			for _, p := range problems {
				t.Error(p)
			}
			if c.check != nil {
				c.check(t, out)
			}
		})
	}
}

const bucketPatch = "patches:\n- target: {kind: GlanceBackend, name: primary}\n  patch: '[{\"op\": \"replace\", \"path\": \"/spec/s3/bucket\", \"value\": \"patched-bucket\"}]'\n"

// placementTree lays out base/ (the standalone objects and memcached) and
// overlay/ (on top of base) with the function where the case says.
func placementTree(t *testing.T, c placement) string {
	t.Helper()
	dir := t.TempDir()
	base, overlay := filepath.Join(dir, "base"), filepath.Join(dir, "overlay")
	for _, d := range []string{base, overlay} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(d, "glance-krm.yaml"), fmt.Sprintf(
			"apiVersion: fn.glance.openstack.c5c3.io/v1alpha1\nkind: RenderGlanceConfig\nmetadata:\n  name: glance-krm\n  annotations:\n    config.kubernetes.io/function: |\n      exec:\n        path: %s\n", fnBinary))
	}
	for _, f := range []string{"glance.yaml", "backends.yaml", "deployment.yaml"} {
		b, err := os.ReadFile(filepath.Join("standalone", "resources", f))
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(base, f), strings.ReplaceAll(string(b), "  namespace: openstack\n", ""))
	}
	writeFile(t, filepath.Join(base, "memcached.yaml"), memcached)
	cfg, err := os.ReadFile(filepath.Join("..", "fn", "kustomize", "kustomizeconfig.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(base, "kustomizeconfig.yaml"), string(cfg))
	fnIf := func(where string) string {
		if c.fnIn == where || c.fnIn == "both" {
			return "transformers: [glance-krm.yaml]\n"
		}
		return ""
	}
	configurations := "configurations: [kustomizeconfig.yaml]\n"
	if c.noConfig {
		configurations = ""
	}
	writeFile(t, filepath.Join(base, "kustomization.yaml"),
		"resources: [glance.yaml, backends.yaml, deployment.yaml, memcached.yaml]\n"+configurations+fnIf("base")+c.base)
	writeFile(t, filepath.Join(overlay, "kustomization.yaml"), "resources: [../base]\n"+fnIf("overlay")+c.overlay)
	return dir
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// consistency lists every way the output contradicts itself: a backend
// naming an absent Glance, a mounted object missing, a generated copy no
// workload mounts, store sections that are not the deployed GlanceBackends'
// names, a default that is not the isDefault one, credentials taken from a
// Secret other than the backend's.
func consistency(t *testing.T, out []*yaml.RNode) []string {
	t.Helper()
	var problems []string
	byKind := map[string]map[string]*yaml.RNode{}
	for _, n := range out {
		if byKind[n.GetKind()] == nil {
			byKind[n.GetKind()] = map[string]*yaml.RNode{}
		}
		byKind[n.GetKind()][n.GetNamespace()+"/"+n.GetName()] = n
	}
	attached := map[string][]string{}
	defaults := map[string]string{}
	creds := map[string]string{}
	for id, b := range byKind["GlanceBackend"] {
		ns, name, _ := strings.Cut(id, "/")
		g := ns + "/" + strOr(b, "spec", "glanceRef", "name")
		if byKind["Glance"][g] == nil {
			problems = append(problems, fmt.Sprintf("GlanceBackend %s names Glance %s, which is not in the output", id, g))
		}
		attached[g] = append(attached[g], name)
		if strOr(b, "spec", "isDefault") == "true" {
			defaults[g] = name
		}
		creds[name] = strOr(b, "spec", "s3", "credentialsSecretRef", "name")
	}
	mounted := map[string]bool{}
	for id, d := range byKind["Deployment"] {
		ns, _, _ := strings.Cut(id, "/")
		pod := []string{"spec", "template", "spec", "volumes"}
		cm, sec := mountedConfig(d)
		if cm == "" && sec == "" {
			continue
		}
		mounted["ConfigMap/"+ns+"/"+cm], mounted["Secret/"+ns+"/"+sec] = true, true
		cmObj, secObj := byKind["ConfigMap"][ns+"/"+cm], byKind["Secret"][ns+"/"+sec]
		if cmObj == nil || secObj == nil {
			problems = append(problems, fmt.Sprintf("Deployment %s mounts ConfigMap %s and Secret %s; one is not in the output", id, cm, sec))
			continue
		}
		g := ns + "/" + secObj.GetLabels()[v1alpha1.LabelGlance]
		conf, err := ini.Load([]byte(strOr(secObj, "stringData", v1alpha1.KeyBackendsConf)))
		if err != nil {
			t.Fatal(err)
		}
		var sections []string
		for _, s := range conf.SectionStrings() {
			if s != ini.DefaultSection {
				sections = append(sections, s)
			}
		}
		var want []string
		for gid, names := range attached {
			if strings.HasPrefix(secObj.GetName(), strings.SplitN(gid, "/", 2)[1]+"-backends-") && strings.HasPrefix(gid, ns+"/") {
				want, g = names, gid
			}
		}
		slices.Sort(want)
		if !slices.Equal(sections, want) {
			problems = append(problems, fmt.Sprintf("Deployment %s: backends.conf has stores %v, the deployed GlanceBackends of %s are %v", id, sections, g, want))
		}
		api, err := ini.Load([]byte(strOr(cmObj, "data", v1alpha1.KeyGlanceAPIConf)))
		if err != nil {
			t.Fatal(err)
		}
		if got := api.Section("glance_store").Key("default_backend").String(); got != defaults[g] {
			problems = append(problems, fmt.Sprintf("Deployment %s: default_backend %s, the isDefault GlanceBackend is %s", id, got, defaults[g]))
		}
		srcs, _ := d.Pipe(yaml.Lookup(append(pod, "[name="+v1alpha1.VolumeCredentialsIn+"]", "projected", "sources")...))
		elems, _ := srcs.Elements()
		for _, src := range elems {
			items, _ := src.Pipe(yaml.Lookup("secret", "items"))
			its, _ := items.Elements()
			for _, it := range its {
				parts := strings.Split(strOr(it, "path"), "/")
				if parts[0] == "optional" && creds[parts[1]] != strOr(src, "secret", "name") {
					problems = append(problems, fmt.Sprintf("Deployment %s takes store %s's credentials from Secret %s, the GlanceBackend names %s",
						id, parts[1], strOr(src, "secret", "name"), creds[parts[1]]))
				}
			}
		}
	}
	for _, kind := range []string{"ConfigMap", "Secret"} {
		for id, o := range byKind[kind] {
			if o.GetAnnotations()[v1alpha1.AnnotationRevision] != "" && !mounted[kind+"/"+id] {
				problems = append(problems, fmt.Sprintf("generated %s %s is shipped but mounted by no workload", kind, id))
			}
		}
	}
	return problems
}

func strOr(n *yaml.RNode, path ...string) string {
	v, err := n.Pipe(yaml.Lookup(path...))
	if err != nil || v == nil {
		return ""
	}
	return v.YNode().Value
}

func wantNamespace(t *testing.T, out []*yaml.RNode, ns string) {
	t.Helper()
	for _, n := range out {
		if n.GetNamespace() != ns {
			t.Errorf("%s %s is in namespace %q, want %q", n.GetKind(), n.GetName(), n.GetNamespace(), ns)
		}
	}
}

func wantStores(t *testing.T, out []*yaml.RNode, glance string, stores ...string) {
	t.Helper()
	for _, n := range out {
		if n.GetKind() == "Secret" && strings.HasPrefix(n.GetName(), glance+"-backends-") {
			conf := strOr(n, "stringData", v1alpha1.KeyBackendsConf)
			for _, s := range stores {
				if !strings.Contains(conf, "["+s+"]\n") {
					t.Errorf("backends.conf of %s lacks [%s]:\n%s", n.GetName(), s, conf)
				}
			}
			return
		}
	}
	t.Errorf("no Secret %s-backends-*", glance)
}

func glanceAPI(t *testing.T, out []*yaml.RNode) *yaml.RNode {
	t.Helper()
	for _, n := range out {
		if n.GetKind() == "Deployment" && strings.HasSuffix(n.GetName(), "glance") || strings.Contains(n.GetName(), "glance-") && n.GetKind() == "Deployment" {
			return n
		}
	}
	t.Fatal("no glance Deployment")
	return nil
}

func wantImage(t *testing.T, out []*yaml.RNode, image string) {
	t.Helper()
	if got := strOr(glanceAPI(t, out), "spec", "template", "spec", "containers", "[name=glance-api]", "image"); got != image {
		t.Errorf("glance-api image %s, want %s", got, image)
	}
}

func wantInitImage(t *testing.T, out []*yaml.RNode, image string) {
	t.Helper()
	if got := strOr(glanceAPI(t, out), "spec", "template", "spec", "initContainers", "[name="+v1alpha1.CredentialsContainer+"]", "image"); got != image {
		t.Errorf("credentials init image %s, want %s", got, image)
	}
}

func wantBucket(t *testing.T, out []*yaml.RNode, bucket string) {
	t.Helper()
	for _, n := range out {
		if n.GetKind() == "Secret" && strings.Contains(strOr(n, "stringData", v1alpha1.KeyBackendsConf), "s3_store_bucket = "+bucket+"\n") {
			return
		}
	}
	t.Errorf("no rendered backends.conf has s3_store_bucket = %s", bucket)
}

func wantUntouched(t *testing.T, out []*yaml.RNode, deployment string) {
	t.Helper()
	for _, n := range out {
		if n.GetKind() == "Deployment" && n.GetName() == deployment {
			if s := n.MustString(); strings.Contains(s, v1alpha1.ReservedPrefix) || strings.Contains(s, "config-dir") {
				t.Errorf("Deployment %s was wired:\n%s", deployment, s)
			}
			return
		}
	}
	t.Errorf("no Deployment %s", deployment)
}
