package glancekrm

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kptdev/krm-functions-sdk/go/fn"
	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/yaml"

	"github.com/c5c3/glance-krm/internal/fntest"
	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

// The function owns only what is unambiguously its own: each case is one
// class of input a user writes, with the results it must get and what the
// output must (not) hold.

const plainContainer = "        image: ghcr.io/c5c3/glance:2025.2\n        command: [glance-api]\n"

type ownershipCase struct {
	input     string
	config    string // functionConfig YAML, if any
	results   []want
	unchanged []string // "Kind/name" objects that must come out as they went in
	contains  []string // substrings of the output items
	absent    []string // substrings the output items must not hold
}

func runCase(t *testing.T, c ownershipCase) {
	t.Helper()
	rl := fntest.ResourceList(t, []byte(c.input))
	if c.config != "" {
		parsed, err := fn.ParseResourceList(rl)
		if err != nil {
			t.Fatal(err)
		}
		parsed.FunctionConfig, err = fn.ParseKubeObject([]byte(c.config))
		if err != nil {
			t.Fatal(err)
		}
		if rl, err = parsed.ToYAML(); err != nil {
			t.Fatal(err)
		}
	}
	out, failed := runFn(t, rl)
	got, err := fn.ParseResourceList(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range c.results {
		found := false
		for _, r := range got.Results {
			found = found || (r.Severity == w.sev && strings.Contains(r.Message, w.text))
		}
		if !found {
			t.Errorf("no %s result containing %q; results:\n%s", w.sev, w.text, fntest.ResultLines(got.Results))
		}
	}
	wantFail := false
	for _, w := range c.results {
		wantFail = wantFail || w.sev == fn.Error
	}
	if failed != wantFail {
		t.Errorf("function failed = %v, want %v; results:\n%s", failed, wantFail, fntest.ResultLines(got.Results))
	}
	in, err := fn.ParseResourceList(rl)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range c.unchanged {
		kind, name, _ := strings.Cut(id, "/")
		before, after := fntest.Find(in.Items, kind, name), fntest.Find(got.Items, kind, name)
		if before == nil || after == nil || before.String() != after.String() {
			t.Errorf("%s changed or vanished:\n--- before\n%v\n--- after\n%v", id, before, after)
		}
	}
	var items strings.Builder
	for _, o := range got.Items {
		items.WriteString(o.String() + "\n---\n")
	}
	for _, s := range c.contains {
		if !strings.Contains(items.String(), s) {
			t.Errorf("output lacks %q:\n%s", s, items.String())
		}
	}
	for _, s := range c.absent {
		if strings.Contains(items.String(), s) {
			t.Errorf("output holds %q", s)
		}
	}
}

func TestOwnership(t *testing.T) {
	two := fntest.Docs(fntest.Glance, fntest.Backend("primary", "glance", true))
	cases := map[string]ownershipCase{
		"a copied GlanceBackend not renamed is an error and nothing renders": {
			input: fntest.Docs(two, fntest.Backend("primary", "glance", false), fntest.Workload("glance", "", plainContainer)),
			results: []want{{fn.Error, "GlanceBackend ns/primary appears more than once"},
				{fn.Info, "nothing rendered for Glance ns/glance"}},
			unchanged: []string{"Deployment/glance"},
			absent:    []string{"kind: Secret"},
		},
		"a label spread by kustomize onto another Deployment does not make it glance-api": {
			input: fntest.Docs(two, fntest.Workload("glance", "", plainContainer),
				strings.Replace(fntest.Workload("memcached", ", labels: {glance.openstack.c5c3.io/glance: glance}",
					"        image: memcached:1.6\n"), "name: glance-api", "name: memcached", 1)),
			results:   []want{{fn.Warning, "Deployment memcached belongs to Glance \"glance\" but was not wired"}, {fn.Info, "wired Deployment glance"}},
			unchanged: []string{"Deployment/memcached"},
		},
		"a workload two Glances claim is an error naming both": {
			input: fntest.Docs(two, strings.Replace(fntest.Glance, "name: glance,", "name: other,", 1), fntest.Backend("o1", "other", true),
				fntest.Workload("glance", ", labels: {glance.openstack.c5c3.io/glance: other}", plainContainer)),
			results:   []want{{fn.Error, "claimed by two Glances: \"glance\" by its name and \"other\" by its"}},
			unchanged: []string{"Deployment/glance"},
		},
		"a single container that does not run glance-api is not treated as glance-api": {
			input: fntest.Docs(two, strings.Replace(fntest.Workload("glance", "", "        image: nginx\n        command: [nginx]\n"),
				"name: glance-api", "name: web", 1)),
			results:   []want{{fn.Warning, "none is treated as glance-api"}},
			unchanged: []string{"Deployment/glance"},
		},
		"a single unnamed container that runs glance-api is wired": {
			input:    fntest.Docs(two, strings.Replace(fntest.Workload("glance", "", plainContainer), "name: glance-api", "name: api", 1)),
			results:  []want{{fn.Info, "wired Deployment glance"}},
			contains: []string{"mountPath: /etc/glance/glance-api.conf.d/"},
		},
		"a user volume mounted where glance-krm mounts is a conflict naming both": {
			input: fntest.Docs(two, fntest.Workload("glance", "", plainContainer+
				"        volumeMounts: [{name: config, mountPath: /etc/glance/glance.conf.d}]\n      volumes: [{name: config, configMap: {name: my-config}}]\n")),
			results:   []want{{fn.Error, `volumeMount "config" of container glance-api is at /etc/glance/glance.conf.d/, where glance-krm mounts its volume "glance-krm-config"`}},
			unchanged: []string{"Deployment/glance"},
		},
		"a user volume named config elsewhere, and a subPath mount, are kept as they are": {
			input: fntest.Docs(two, fntest.Workload("glance", "", plainContainer+
				"        volumeMounts: [{name: config, mountPath: /etc/app}, {name: config, mountPath: /etc/glance/policy.yaml, subPath: policy.yaml}]\n      volumes: [{name: config, configMap: {name: my-config}}]\n")),
			results:  []want{{fn.Info, "wired Deployment glance"}},
			contains: []string{"{name: config, mountPath: /etc/app}", "subPath: policy.yaml", "{name: config, configMap: {name: my-config}}"},
		},
		"a user OS_ variable that would override a rendered option is a conflict; others stay": {
			input: fntest.Docs(two, fntest.Workload("glance", "", plainContainer+
				"        env: [{name: OS_DATABASE__CONNECTION, value: 'sqlite://'}, {name: OS_GLANCE_STORE__DEFAULT_BACKEND, value: x}, {name: OS_PRIMARY__S3_STORE_HOST, value: x}]\n")),
			results: []want{{fn.Error, "env OS_DATABASE__CONNECTION of container glance-api would override [database] connection"},
				{fn.Error, "env OS_GLANCE_STORE__DEFAULT_BACKEND of container glance-api would override [glance_store] default_backend"},
				{fn.Error, "env OS_PRIMARY__S3_STORE_HOST of container glance-api would override [primary] s3_store_host"}},
			unchanged: []string{"Deployment/glance"},
		},
		"an unrelated OS_ variable stays": {
			input:    fntest.Docs(two, fntest.Workload("glance", "", plainContainer+"        env: [{name: OS_DEFAULT__SHOW_IMAGE_DIRECT_URL, value: 'true'}]\n")),
			results:  []want{{fn.Info, "wired Deployment glance"}},
			contains: []string{"OS_DEFAULT__SHOW_IMAGE_DIRECT_URL"},
		},
		"environment from envFrom is flagged: it may override what glance-krm delivers": {
			input:    fntest.Docs(two, fntest.Workload("glance", "", plainContainer+"        envFrom: [{secretRef: {name: extra-env}}]\n")),
			results:  []want{{fn.Warning, "takes environment variables from secretRef extra-env"}, {fn.Info, "wired Deployment glance"}},
			contains: []string{"envFrom: [{secretRef: {name: extra-env}}]"},
		},
		"sh -c without --config-dir reads oslo.config's default dirs, which are glance-krm's": {
			input:    fntest.Docs(two, fntest.Workload("glance", "", "        image: ghcr.io/c5c3/glance:2025.2\n        command: [/bin/sh, -c, 'glance-manage db_sync && exec glance-api']\n")),
			results:  []want{{fn.Info, "wired Deployment glance"}},
			contains: []string{"command: [/bin/sh, -c, 'glance-manage db_sync && exec glance-api']\n"},
		},
		"sh -c with its own --config-dir is refused with how to write it": {
			input:     fntest.Docs(two, fntest.Workload("glance", "", "        image: ghcr.io/c5c3/glance:2025.2\n        command: [/bin/sh, -c, 'exec glance-api --config-dir /etc/glance/mine.d']\n")),
			results:   []want{{fn.Error, "starts glance-api through a shell script that names its own --config-dir"}},
			unchanged: []string{"Deployment/glance"},
		},
		"a WSGI server serving glance reads the default dirs": {
			input:    fntest.Docs(two, fntest.Workload("glance", "", "        image: ghcr.io/c5c3/glance:2025.2\n        command: [uwsgi, --ini, /etc/glance/glance-api-uwsgi.ini]\n")),
			results:  []want{{fn.Info, "wired Deployment glance"}},
			contains: []string{"command: [uwsgi, --ini, /etc/glance/glance-api-uwsgi.ini]\n"},
		},
		"sh -c with its own --config-dir that passes \"$@\" on gets the flags after its name argument": {
			input:    fntest.Docs(two, fntest.Workload("glance", "", "        image: ghcr.io/c5c3/glance:2025.2\n        command: [sh, -ec, 'exec glance-api --config-dir /etc/glance/mine.d \"$@\"', glance-api]\n")),
			results:  []want{{fn.Info, "wired Deployment glance"}},
			contains: []string{"glance-api, --config-dir, /etc/glance/glance.conf.d/, --config-dir, /etc/glance/glance-api.conf.d/]"},
		},
		"sh -c that names every dir itself is left as it is": {
			input:    fntest.Docs(two, fntest.Workload("glance", "", "        image: ghcr.io/c5c3/glance:2025.2\n        command: [sh, -c, 'exec glance-api --config-dir /etc/glance/mine.d --config-dir /etc/glance/glance.conf.d/ --config-dir=/etc/glance/glance-api.conf.d']\n")),
			results:  []want{{fn.Info, "wired Deployment glance"}},
			contains: []string{"command: [sh, -c, 'exec glance-api --config-dir /etc/glance/mine.d --config-dir /etc/glance/glance.conf.d/ --config-dir=/etc/glance/glance-api.conf.d']\n"},
		},
		"no command (the image's entrypoint) is refused with how to write it": {
			input:     fntest.Docs(two, fntest.Workload("glance", "", "        image: ghcr.io/c5c3/glance:2025.2\n        args: [--debug]\n")),
			results:   []want{{fn.Error, "sets no command, so the image's entrypoint runs glance-api with arguments unknown at build time"}},
			unchanged: []string{"Deployment/glance"},
		},
		"a command line without --config-dir reads the default dirs and gets no flags": {
			input:    fntest.Docs(two, fntest.Workload("glance", "", "        image: ghcr.io/c5c3/glance:2025.2\n        command: [glance-api, --config-file, /etc/glance/glance-api.conf]\n")),
			results:  []want{{fn.Info, "wired Deployment glance"}},
			contains: []string{"command: [glance-api, --config-file, /etc/glance/glance-api.conf]\n"},
		},
		"a wrapper that runs glance-api with its own dirs gets ours at the end": {
			input:    fntest.Docs(two, fntest.Workload("glance", "", "        image: ghcr.io/c5c3/glance:2025.2\n        command: [tini, --]\n        args: [glance-api, --config-dir, /etc/glance/mine.d]\n")),
			results:  []want{{fn.Info, "wired Deployment glance"}},
			contains: []string{"args: [glance-api, --config-dir, /etc/glance/mine.d, --config-dir, /etc/glance/glance.conf.d/, --config-dir, /etc/glance/glance-api.conf.d/]"},
		},
		"another program is refused": {
			input:     fntest.Docs(two, fntest.Workload("glance", "", "        image: ghcr.io/c5c3/glance:2025.2\n        command: [nginx, -g, 'daemon off;']\n")),
			results:   []want{{fn.Error, "does not start glance-api in its command or args (nginx -g daemon off;)"}},
			unchanged: []string{"Deployment/glance"},
		},
		"an image that contradicts spec.image is a conflict": {
			input:     fntest.Docs(two, fntest.Workload("glance", "", "        image: quay.io/other/glance:1\n        command: [glance-api]\n")),
			results:   []want{{fn.Error, "container glance-api runs image quay.io/other/glance:1, but glance-krm sets ghcr.io/c5c3/glance:2025.2 there (from the Glance's spec.image)"}},
			unchanged: []string{"Deployment/glance"},
		},
		"a digest pin of spec.image (kustomize images: digest) survives": {
			input:    fntest.Docs(two, fntest.Workload("glance", "", "        image: ghcr.io/c5c3/glance@sha256:"+strings.Repeat("a", 64)+"\n        command: [glance-api]\n")),
			results:  []want{{fn.Info, "wired Deployment glance"}},
			contains: []string{"image: ghcr.io/c5c3/glance@sha256:" + strings.Repeat("a", 64)},
		},
		"an image changed after the last render (kustomize images: in an overlay) survives a re-render": {
			input: fntest.Docs(two, strings.Replace(fntest.Workload("glance", "", "        image: mirror.local/c5c3/glance:2025.2\n        command: [glance-api]\n"),
				"namespace: ns}", "namespace: ns, annotations: {glance.openstack.c5c3.io/glance-api-image: 'ghcr.io/c5c3/glance:2025.2'}}", 1)),
			results:  []want{{fn.Info, "wired Deployment glance"}},
			contains: []string{"image: mirror.local/c5c3/glance:2025.2"},
		},
		"a spec.image change after the last render replaces the image it set": {
			input: fntest.Docs(two, strings.Replace(fntest.Workload("glance", "", "        image: ghcr.io/c5c3/glance:2025.1\n        command: [glance-api]\n"),
				"namespace: ns}", "namespace: ns, annotations: {glance.openstack.c5c3.io/glance-api-image: 'ghcr.io/c5c3/glance:2025.1'}}", 1)),
			results:  []want{{fn.Info, "wired Deployment glance"}},
			contains: []string{"image: ghcr.io/c5c3/glance:2025.2"},
		},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) { runCase(t, c) })
	}
}

// The functionConfig, the input's shape, and the options of the release:
// what the function refuses or warns of before it wires anything.
func TestConfigInputAndOptions(t *testing.T) {
	two := fntest.Docs(fntest.Glance, fntest.Backend("primary", "glance", true))
	cases := map[string]ownershipCase{
		"the credentials image comes from the functionConfig": {
			input:    fntest.Docs(two, fntest.Workload("glance", "", plainContainer)),
			config:   "apiVersion: fn.glance.openstack.c5c3.io/v1alpha1\nkind: RenderGlanceConfig\nmetadata: {name: f}\nspec: {credentialsImage: mirror.local/glance-krm-fn:v0.1.0}\n",
			results:  []want{{fn.Info, "wired Deployment glance"}},
			contains: []string{"image: mirror.local/glance-krm-fn:v0.1.0"},
		},
		"a functionConfig field the function does not understand is an error": {
			input:   two,
			config:  "apiVersion: fn.glance.openstack.c5c3.io/v1alpha1\nkind: RenderGlanceConfig\nmetadata: {name: f}\nspec: {credentialImage: x}\nextra: 1\n",
			results: []want{{fn.Error, "functionConfig field spec.credentialImage is not understood"}, {fn.Error, "functionConfig field extra is not understood"}},
		},
		"a kpt ConfigMap functionConfig with an unknown key is an error": {
			input:   two,
			config:  "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: f}\ndata: {history: '3'}\n",
			results: []want{{fn.Error, "functionConfig field data.history is not understood"}},
		},
		"a functionConfig of another kind is an error": {
			input:   two,
			config:  "apiVersion: example.com/v1\nkind: Settings\nmetadata: {name: f}\n",
			results: []want{{fn.Error, "functionConfig example.com/v1 Settings is not understood"}},
		},
		"a backend naming an absent Glance while others are here is a warning naming both": {
			input:   fntest.Docs(two, fntest.Backend("stray", "glance-typo", true)),
			results: []want{{fn.Warning, `GlanceBackend ns/stray names Glance "glance-typo", which is not in this input (Glances here: ns/glance)`}},
		},
		"a mis-cased kind of our group is an error with the right spelling": {
			input:   fntest.Docs(two, strings.Replace(fntest.Backend("x", "glance", false), "kind: GlanceBackend", "kind: Glancebackend", 1)),
			results: []want{{fn.Error, `kind "Glancebackend" is not served by glance.openstack.c5c3.io: kinds are case-sensitive; did you mean "GlanceBackend"?`}},
		},
		"a list of our kind is an error": {
			input:   fntest.Docs(two, "apiVersion: glance.openstack.c5c3.io/v1alpha1\nkind: GlanceBackendList\nmetadata: {name: l}\nitems: []\n"),
			results: []want{{fn.Error, `kind "GlanceBackendList" is not read`}},
		},
		"our kind without apiVersion is an error": {
			input:   fntest.Docs(two, strings.Replace(fntest.Backend("x", "glance", false), "apiVersion: glance.openstack.c5c3.io/v1alpha1\n", "", 1)),
			results: []want{{fn.Error, "GlanceBackend x has no apiVersion"}},
		},
		"a backend that cannot be decoded keeps its Glance from being reported rendered": {
			input: fntest.Docs(two, strings.Replace(fntest.Backend("broken", "glance", false), "isDefault: false", "isDefault: maybe", 1), fntest.Workload("glance", "", plainContainer)),
			results: []want{{fn.Error, `spec.isDefault: Invalid value: "maybe": must be of type boolean`},
				{fn.Error, "GlanceBackend broken attached to Glance glance could not be read"}},
			unchanged: []string{"Deployment/glance"},
			absent:    []string{"kind: Secret"},
		},
		"a misspelt extraOptions key fails the build with a did-you-mean on a release with a catalog": {
			input: fntest.Docs(strings.ReplaceAll(fntest.Glance, `"2025.2"`, `"2025.1"`),
				fntest.Backend("primary", "glance", true)+"  extraOptions: {s3_store_thread_pool: '10'}\n"),
			results: []want{{fn.Error, `option "s3_store_thread_pool" is not an option of an S3 store in Glance 2025.1 (Debian trixie: glance-api 2:30.0.0-3+deb13u5, python3-glance-store 4.9.1-2)`},
				{fn.Error, `did you mean "s3_store_thread_pools"?`}},
		},
		"show_image_direct_url with S3 stores whose locations carry keys warns": {
			input: fntest.Docs(fntest.Glance+"  extraConfig: {DEFAULT: {show_image_direct_url: 'true'}}\n", fntest.Backend("primary", "glance", true)),
			results: []want{{fn.Warning, `glance-krm: option [DEFAULT] show_image_direct_url shows every user who may read an image its location URL, and Glance 2025.2`},
				{fn.Warning, "it would leak the keys of every store"}},
		},
		"show_multiple_locations on 2026.2 (locations without keys) renders": {
			input:   fntest.Docs(strings.ReplaceAll(fntest.Glance, `"2025.2"`, `"2026.2"`)+"  extraConfig: {DEFAULT: {show_image_direct_url: 'true'}}\n", fntest.Backend("primary", "glance", true)),
			results: []want{{fn.Info, "rendered Glance ns/glance"}},
		},
		"the same key on a release without a catalog warns": {
			input:   fntest.Docs(strings.ReplaceAll(fntest.Glance, `"2025.2"`, `"2024.2"`), fntest.Backend("primary", "glance", true)+"  extraOptions: {s3_store_thread_pool: '10'}\n"),
			results: []want{{fn.Warning, `no option catalog for openStackRelease "2024.2"`}},
		},
		"a typed field the release ignores is an error": {
			input: fntest.Docs(strings.ReplaceAll(fntest.Glance, `"2025.2"`, `"2022.2"`),
				strings.Replace(fntest.Backend("primary", "glance", true), "bucket: primary-bucket,", "bucket: primary-bucket, region: eu-1,", 1)),
			results: []want{{fn.Error, "spec.s3.region renders s3_store_region_name, which Glance 2022.2 (Debian bookworm: glance-api 2:25.1.0-2+deb12u5, python3-glance-store 4.1.0-4) does not read"}},
		},
		"an unknown extraConfig section or option of the release is an error with a did-you-mean": {
			input: fntest.Docs(strings.ReplaceAll(fntest.Glance, `"2025.2"`, `"2025.1"`)+"  extraConfig: {image_formats: {disk_formats: raw}, DEFAULT: {show_image_direct_urls: 'true'}}\n",
				fntest.Backend("primary", "glance", true)),
			results: []want{{fn.Error, `section [image_formats] is not a section glance-api.conf has in Glance 2025.1`}, {fn.Error, `did you mean "image_format"?`},
				{fn.Error, `option "show_image_direct_urls" is not an option of section [DEFAULT]`}, {fn.Error, `did you mean "show_image_direct_url"?`}},
		},
		"[backend_defaults] is a section from glance_store 5.0 on": {
			input: fntest.Docs(strings.ReplaceAll(fntest.Glance, `"2025.2"`, `"2026.2"`)+"  extraConfig: {backend_defaults: {s3_store_large_object_size: '200'}}\n",
				fntest.Backend("primary", "glance", true)),
			results: []want{{fn.Info, "rendered Glance ns/glance"}},
		},
		"a URL's userinfo is never echoed": {
			input:   fntest.Docs(fntest.Glance, strings.Replace(fntest.Backend("primary", "glance", true), "https://s3.example", "ftp://admin:hunter2@s3.example", 1)),
			results: []want{{fn.Error, "ftp://REDACTED@s3.example"}},
		},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) { runCase(t, c) })
	}
}

// TestNoResultEchoesUserinfo: whatever the field, a result never carries
// the password of a URL.
func TestNoResultEchoesUserinfo(t *testing.T) {
	for _, field := range []string{"keystoneEndpoint", "keystonePublicEndpoint"} {
		in := strings.Replace(fntest.Glance, "keystoneEndpoint: http://keystone:5000/v3",
			"keystoneEndpoint: http://keystone:5000/v3\n  "+field+": \"gopher://u:s3cr3t@k\"", 1)
		in = strings.Replace(in, "keystoneEndpoint: http://keystone:5000/v3\n  keystoneEndpoint:", "keystoneEndpoint:", 1)
		out, _ := runFn(t, fntest.ResourceList(t, []byte(fntest.Docs(in, fntest.Backend("p", "glance", true)))))
		rl, err := fn.ParseResourceList(out)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(fntest.ResultLines(rl.Results), "s3cr3t") {
			t.Errorf("%s: a result echoes the password:\n%s", field, fntest.ResultLines(rl.Results))
		}
	}
}

type want struct {
	sev  fn.Severity
	text string // a substring of one result's message
}

// TestGlancesNamedLikeEachOthersObjects: a Glance named like an object
// another Glance of its namespace generates (its API's Deployment and
// Service, its jobs' NetworkPolicy) is refused, both Glances named.
func TestGlancesNamedLikeEachOthersObjects(t *testing.T) {
	named := func(name string) string { return strings.Replace(fntest.Glance, "name: glance,", "name: "+name+",", 1) }
	for name, c := range map[string]struct {
		input string
		clash string
	}{
		"an API's Deployment is another Glance's": {
			input: fntest.Docs(fntest.Glance+"  apis: [{name: default}, {name: internal}]\n", fntest.Backend("a", "glance", true),
				named("glance-internal"), fntest.Backend("b", "glance-internal", true)),
			clash: "Deployment glance-internal",
		},
		"the jobs' NetworkPolicy is another Glance's": {
			input: fntest.Docs(fntest.Glance+"  networkPolicy: {ingress: [{namespaceSelector: {}}]}\n", fntest.Backend("a", "glance", true),
				named("glance-jobs")+"  networkPolicy: {ingress: [{namespaceSelector: {}}]}\n", fntest.Backend("b", "glance-jobs", true)),
			clash: "NetworkPolicy glance-jobs",
		},
		"no clash": {
			input: fntest.Docs(fntest.Glance, fntest.Backend("a", "glance", true), named("glance-two"), fntest.Backend("b", "glance-two", true)),
		},
	} {
		t.Run(name, func(t *testing.T) {
			out, failed := runFn(t, fntest.ResourceList(t, []byte(c.input)))
			rl, err := fn.ParseResourceList(out)
			if err != nil {
				t.Fatal(err)
			}
			lines := fntest.ResultLines(rl.Results)
			if c.clash == "" {
				if failed {
					t.Fatalf("failed:\n%s", lines)
				}
				return
			}
			if !failed {
				t.Fatalf("two Glances rendering %s passed:\n%s", c.clash, lines)
			}
			if strings.Count(lines, "both render "+c.clash) != 2 {
				t.Errorf("want one error on each Glance naming %s:\n%s", c.clash, lines)
			}
		})
	}
}

// TestCredentialsWhereEachReleaseReadsThem: glance before 2026.2 under a
// WSGI server reads /etc/glance/<server>.conf.d/ (it names no program to
// oslo.config, which takes sys.argv[0]); the credentials are mounted there
// too, on generated and hand-written workloads, and a shell script that
// starts a WSGI server on such a release is refused with how to write it.
func TestCredentialsWhereEachReleaseReadsThem(t *testing.T) {
	uwsgi := "        command: [uwsgi, --ini, /etc/glance/glance.conf.d/glance-api-uwsgi.ini]\n"
	for name, c := range map[string]struct {
		release, container string // container "" generates the workload
		want               []string
		err                string
	}{
		"2026.1 generated: uWSGI's directory too":    {release: "2026.1", want: []string{v1alpha1.MountCredentialsDir, "/etc/glance/uwsgi.conf.d/"}},
		"2026.2 generated: glance names its program": {release: "2026.2", want: []string{v1alpha1.MountCredentialsDir}},
		"2025.2 generated: the eventlet server":      {release: "2025.2", want: []string{v1alpha1.MountCredentialsDir}},
		"2025.2 hand-written under uWSGI":            {release: "2025.2", container: uwsgi, want: []string{v1alpha1.MountCredentialsDir, "/etc/glance/uwsgi.conf.d/"}},
		"2026.1 gunicorn behind tini": {release: "2026.1", container: "        command: [tini, --, gunicorn, glance.wsgi.api:application]\n",
			want: []string{v1alpha1.MountCredentialsDir, "/etc/glance/gunicorn.conf.d/"}},
		"2026.1 hand-written glance-api": {release: "2026.1", container: "        command: [glance-api]\n", want: []string{v1alpha1.MountCredentialsDir}},
		"2026.1 uWSGI through a shell is refused": {release: "2026.1", container: "        command: [/bin/sh, -c, 'exec uwsgi --ini /etc/glance/glance.conf.d/glance-api-uwsgi.ini']\n",
			err: "starts uwsgi through a shell script: glance before 2026.2 reads its credentials from /etc/glance/<program>.conf.d/"},
		"2026.2 uWSGI through a shell is fine": {release: "2026.2", container: "        command: [/bin/sh, -c, 'exec uwsgi --ini /etc/glance/glance.conf.d/glance-api-uwsgi.ini']\n",
			want: []string{v1alpha1.MountCredentialsDir}},
	} {
		t.Run(name, func(t *testing.T) {
			input := []string{strings.ReplaceAll(fntest.Glance, `"2025.2"`, `"`+c.release+`"`), fntest.Backend("a", "glance", true)}
			if c.container != "" {
				input = append(input, fntest.Workload("glance", "", c.container))
			}
			rl, failed := runFnOn(t, fntest.Docs(input...))
			if c.err != "" {
				if !failed || !slices.ContainsFunc(rl.Results, func(r *fn.Result) bool { return strings.Contains(r.Message, c.err) }) {
					t.Fatalf("want an error %q, got %v", c.err, rl.Results)
				}
				return
			}
			if failed {
				t.Fatalf("failed: %v", rl.Results)
			}
			var got []string
			for _, o := range rl.Items {
				if o.GetKind() != "Deployment" {
					continue
				}
				var d appsv1.Deployment
				if err := yaml.Unmarshal([]byte(o.String()), &d); err != nil {
					t.Fatal(err)
				}
				for _, m := range d.Spec.Template.Spec.Containers[0].VolumeMounts {
					if m.Name == v1alpha1.VolumeCredentials {
						got = append(got, m.MountPath)
					}
				}
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("credentials mounts (-want +got):\n%s", diff)
			}
		})
	}
}
