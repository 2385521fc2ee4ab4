package wire

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

func TestRunsGlanceAPI(t *testing.T) {
	for name, c := range map[string]struct {
		argv []string
		want bool
	}{
		"directly":                     {[]string{"glance-api"}, true},
		"by path":                      {[]string{"/usr/bin/glance-api", "--debug"}, true},
		"behind tini":                  {[]string{"tini", "--", "glance-api"}, true},
		"in a shell script":            {[]string{"sh", "-c", "exec glance-api --config-dir /x"}, true},
		"uWSGI serving glance":         {[]string{"uwsgi", "--ini", "/etc/glance/glance.conf.d/glance-api-uwsgi.ini"}, true},
		"env NAME=value gunicorn":      {[]string{"env", "A=b", "gunicorn", "glance.wsgi.api:application"}, true},
		"uWSGI serving something else": {[]string{"uwsgi", "--ini", "/etc/nova/api.ini"}, false},
		"glance-manage":                {[]string{"glance-manage", "db", "sync"}, false},
		"a sidecar":                    {[]string{"memcached"}, false},
		"nothing":                      {nil, false},
	} {
		t.Run(name, func(t *testing.T) {
			if got := runsGlanceAPI(c.argv); got != c.want {
				t.Errorf("runsGlanceAPI(%q) = %v, want %v", c.argv, got, c.want)
			}
		})
	}
}

func TestPlanConfigDirs(t *testing.T) {
	for name, c := range map[string]struct {
		container string
		want      configDirPlan
		err       string
	}{
		"glance-api reads the default dirs": {container: "command: [glance-api]", want: configDirPlan{}},
		"its own --config-dir gets ours appended": {container: "command: [glance-api, --config-dir, /etc/mine]",
			want: configDirPlan{field: "command", missing: ConfigDirs}},
		"args when there are args": {container: "command: [glance-api]\nargs: [--config-dir, /etc/mine]",
			want: configDirPlan{field: "args", missing: ConfigDirs}},
		"ours already there": {container: "command: [glance-api, --config-dir, /etc/mine, --config-dir, " + ConfigDirs[0] + ", --config-dir, " + ConfigDirs[1] + "]",
			want: configDirPlan{field: "command"}},
		"a script without --config-dir": {container: "command: [sh, -c, exec glance-api]", want: configDirPlan{}},
		"a script passing \"$@\" on": {container: `command: [sh, -c, 'exec glance-api --config-dir /etc/mine "$@"', glance]`,
			want: configDirPlan{field: "command", missing: ConfigDirs}},
		"a script with its own dirs":   {container: "command: [sh, -c, exec glance-api --config-dir /etc/mine]", err: "through a shell script that names its own --config-dir"},
		"no command: the entrypoint's": {container: "image: x", err: "sets no command"},
		"another program":              {container: "command: [nova-api]", err: "does not start glance-api"},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := planConfigDirs(yaml.MustParse("name: glance-api\n" + c.container))
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want one containing %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(c.want, got, cmp.AllowUnexported(configDirPlan{})); diff != "" {
				t.Errorf("plan (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMergeImage(t *testing.T) {
	const want = "ghcr.io/c5c3/glance:2025.2"
	for name, c := range map[string]struct {
		cur, last string
		want      string // "" when refused
	}{
		"nothing there":                           {cur: "", want: want},
		"what the function set last time":         {cur: "ghcr.io/c5c3/glance:2025.1", last: "ghcr.io/c5c3/glance:2025.1", want: want},
		"an overlay's images: after the function": {cur: "mirror.example/glance:2025.2", last: want, want: "mirror.example/glance:2025.2"},
		"a digest pin of the same tag":            {cur: "ghcr.io/c5c3/glance:2025.2@sha256:abc", want: "ghcr.io/c5c3/glance:2025.2@sha256:abc"},
		"a digest pin without a tag":              {cur: "ghcr.io/c5c3/glance@sha256:abc", want: "ghcr.io/c5c3/glance@sha256:abc"},
		"a pin of another registry, with a port":  {cur: "registry:5000/c5c3/glance@sha256:abc", want: ""},
		"another image written by hand":           {cur: "ghcr.io/other/glance:1", want: ""},
	} {
		t.Run(name, func(t *testing.T) {
			rn := yaml.MustParse("metadata: {}")
			if c.last != "" {
				if err := rn.PipeE(yaml.SetAnnotation(v1alpha1.AnnotationGlanceAPIImage, c.last)); err != nil {
					t.Fatal(err)
				}
			}
			container := yaml.MustParse("name: glance-api")
			if c.cur != "" {
				container = yaml.MustParse("name: glance-api\nimage: " + c.cur)
			}
			got, err := mergeImage(rn, v1alpha1.AnnotationGlanceAPIImage, container, "container glance-api", want)
			if c.want == "" {
				if err == nil || !strings.Contains(err.Error(), "the Glance's spec.image") {
					t.Fatalf("got %q, %v; want a conflict naming spec.image", got, err)
				}
				return
			}
			if err != nil || got != c.want {
				t.Errorf("got %q, %v; want %q", got, err, c.want)
			}
		})
	}
}

func TestWorkloadTwiceChangesNothing(t *testing.T) {
	g := &v1alpha1.Glance{}
	g.Name, g.Namespace = "glance", "ns"
	g.Spec.OpenStackRelease = "2025.2"
	g.Spec.Image = v1alpha1.ImageSpec{Repository: "ghcr.io/c5c3/glance", Tag: "2025.2"}
	g.Spec.Database.SecretRef.Name = "db"
	g.Spec.ServiceUser.SecretRef.Name = "service"
	w := Wiring{Glance: g, ConfigMap: "glance-config-1", BackendsSecret: "glance-backends-1", CredentialsImage: "fn:1",
		Options: map[string]string{"OS_DEFAULT__DEBUG": "[DEFAULT] debug"}}
	rn := yaml.MustParse(`apiVersion: apps/v1
kind: Deployment
metadata: {name: glance}
spec:
  template:
    spec:
      containers: [{name: glance-api, command: [glance-api]}]
`)
	for i := range 2 {
		before := rn.MustString()
		if why, errs := w.Workload(rn); why != "" || len(errs) > 0 {
			t.Fatalf("run %d: %q %v", i, why, errs)
		}
		if i == 1 {
			if diff := cmp.Diff(before, rn.MustString()); diff != "" {
				t.Errorf("wiring a wired workload changed it (-before +after):\n%s", diff)
			}
		}
	}
	// A variable that would override a delivered option is refused.
	bad := yaml.MustParse(`spec:
  template:
    spec:
      containers: [{name: glance-api, command: [glance-api], env: [{name: os_default__debug, value: "true"}]}]
`)
	if _, errs := w.Workload(bad); len(errs) == 0 || !strings.Contains(errs[0].Error(), "would override [DEFAULT] debug") {
		t.Errorf("an overriding variable was not refused: %v", errs)
	}
}

// LP #2121144 on 2025.2: botocore's checksum variables join glance-api's
// environment when a store is on a non-AWS server; a value the workload
// sets itself stays, and wiring again adds nothing.
func TestChecksumEnvironment(t *testing.T) {
	g := &v1alpha1.Glance{}
	g.Name, g.Namespace = "glance", "ns"
	g.Spec.Image = v1alpha1.ImageSpec{Repository: "ghcr.io/c5c3/glance", Tag: "2025.2"}
	g.Spec.Database.SecretRef.Name = "db"
	g.Spec.ServiceUser.SecretRef.Name = "service"
	store := func(host string) *v1alpha1.GlanceBackend {
		b := &v1alpha1.GlanceBackend{}
		b.Name = "s"
		b.Spec.S3 = &v1alpha1.S3BackendSpec{Host: host, Bucket: "b"}
		return b
	}
	for name, c := range map[string]struct {
		release, host, env string
		want               map[string]string
	}{
		"2025.2 on a local S3 server": {"2025.2", "http://127.0.0.1:7070", "",
			map[string]string{v1alpha1.EnvRequestChecksum: "when_required", v1alpha1.EnvResponseChecksum: "when_required"}},
		"2025.2, the workload's own value stays": {"2025.2", "http://127.0.0.1:7070", `[{name: AWS_REQUEST_CHECKSUM_CALCULATION, value: when_supported}]`,
			map[string]string{v1alpha1.EnvRequestChecksum: "when_supported", v1alpha1.EnvResponseChecksum: "when_required"}},
		"2025.2 on AWS":                {"2025.2", "https://s3.amazonaws.com", "", map[string]string{}},
		"2026.1 (the options instead)": {"2026.1", "http://127.0.0.1:7070", "", map[string]string{}},
	} {
		t.Run(name, func(t *testing.T) {
			g.Spec.OpenStackRelease = c.release
			w := Wiring{Glance: g, Backends: []*v1alpha1.GlanceBackend{store(c.host)}, ConfigMap: "c", BackendsSecret: "s", CredentialsImage: "fn:1"}
			rn := yaml.MustParse("spec: {template: {spec: {containers: [{name: glance-api, command: [glance-api]}]}}}")
			if c.env != "" {
				if err := rn.PipeE(yaml.Lookup("spec", "template", "spec", "containers", "[name=glance-api]"), yaml.SetField("env", yaml.MustParse(c.env))); err != nil {
					t.Fatal(err)
				}
			}
			var once string
			for i := range 2 {
				if why, errs := w.Workload(rn); why != "" || len(errs) > 0 {
					t.Fatalf("%q %v", why, errs)
				}
				if i == 0 {
					once = rn.MustString()
				}
			}
			if diff := cmp.Diff(once, rn.MustString()); diff != "" {
				t.Errorf("wiring again changed the workload:\n%s", diff)
			}
			got := map[string]string{}
			env, _ := rn.Pipe(yaml.Lookup("spec", "template", "spec", "containers", "[name=glance-api]", "env"))
			if env != nil {
				elems, _ := env.Elements()
				for _, e := range elems {
					got[e.Field("name").Value.YNode().Value] = e.Field("value").Value.YNode().Value
				}
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("glance-api's environment (-want +got):\n%s", diff)
			}
		})
	}
}
