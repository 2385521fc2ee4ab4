package glancekrm

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kptdev/krm-functions-sdk/go/fn"
	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/yaml"

	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

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
			input := []string{strings.ReplaceAll(testGlance, `"2025.2"`, `"`+c.release+`"`), testBackend("a", "glance", true)}
			if c.container != "" {
				input = append(input, testWorkload("glance", "", c.container))
			}
			rl, failed := runFnOn(t, docs(input...))
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
