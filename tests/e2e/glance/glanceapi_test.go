//go:build e2e

package glance_test

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/c5c3/glance-krm/internal/testenv"
	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

// glanceAPI is a running Debian glance-api.
type glanceAPI struct {
	url    string
	cmd    *exec.Cmd
	log    string
	exited chan struct{} // closed when the process has been waited for
}

// startGlance runs glance-api, which outlives the calling (sub)test: the
// caller stops it. It runs on the rendered files, unmodified, plus one
// file of test-only overrides (loopback bind, one worker); the database comes from the
// credentials file like everything secret. The environment is the
// container's (glance-krm sets none).
func startGlance(t *testing.T, root string, r rendering) *glanceAPI {
	t.Helper()
	return startGlanceReady(t, root, r, "/v2/info/stores")
}

// startGlanceReady is startGlance, ready when path answers 200.
func startGlanceReady(t *testing.T, root string, r rendering, ready string) *glanceAPI {
	t.Helper()
	return serveGlance(t, root, r, ready, true)
}

// serveGlance starts glance-api, after glance-manage db_sync when sync
// is set (an upgrade runs its own glance-manage steps instead).
func serveGlance(t *testing.T, root string, r rendering, ready string, sync bool) *glanceAPI {
	t.Helper()
	port := testenv.FreePort(t)
	overrides := write(t, filepath.Join(root, "test-overrides.d", "test-overrides.conf"), fmt.Sprintf(`# Test only: what needs a cluster.
[DEFAULT]
bind_host = 127.0.0.1
bind_port = %d
workers = 1
`, port))
	// The overrides are a --config-file: that replaces the default config
	// files only, and the default directories (the rendered files and the
	// credentials) are read after it and win.
	args := []string{"--config-file", overrides}

	// glance-manage's default directories are glance.conf.d and
	// glance-manage.conf.d: a db-sync job names glance-krm's explicitly.
	if sync {
		if out, err := r.manage(t, root, "db_sync").CombinedOutput(); err != nil {
			t.Fatalf("glance-manage db_sync: %v\n%s", err, out)
		}
	}

	g := &glanceAPI{url: fmt.Sprintf("http://127.0.0.1:%d", port), log: filepath.Join(root, fmt.Sprintf("glance-api-%d.log", port))}
	log, err := os.Create(g.log)
	if err != nil {
		t.Fatal(err)
	}
	if r.rel.wsgi {
		// No standalone server: uwsgi serves glance.wsgi.api, which takes
		// no flags (the overrides above are for glance-manage only).
		// The HTTP options are Debian's glance-api-uwsgi.ini's; without
		// its "Connection: close" a client reusing a connection uwsgi has
		// dropped gets "connection reset by peer" now and then.
		g.cmd = r.inPod(t, root, nil, "uwsgi", "--plugin", "http,python3", "--http-socket", fmt.Sprintf("127.0.0.1:%d", port),
			"--module", "glance.wsgi.api:application", "--master", "--processes", "1", "--threads", "1", "--lazy-apps",
			"--die-on-term", "--buffer-size", "65535", "--http-auto-chunked", "--http-chunked-input", "--http-raw-body",
			"--chunked-input-limit", "1073741824", "--enable-threads", "--add-header", "Connection: close")
	} else {
		g.cmd = r.inPod(t, root, nil, "glance-api", args...)
	}
	g.cmd.Env = append(g.cmd.Env, containerEnv(t, r.container)...)
	g.cmd.Stdout, g.cmd.Stderr = log, log
	// Its own session: glance-api signals its whole process group.
	g.cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := g.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	g.exited = make(chan struct{})
	go func() { _ = g.cmd.Wait(); close(g.exited) }()
	deadline := time.Now().Add(90 * time.Second)
	for {
		resp, err := http.Get(g.url + ready)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return g
			}
		}
		select {
		case <-g.exited:
			t.Fatalf("glance-api exited: %v\n%s", g.cmd.ProcessState, g.tail())
		case <-time.After(500 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			g.stop()
			b, _ := os.ReadFile(g.log)
			t.Fatalf("glance-api did not become ready in 90 s: %v\n%s", err, strings.Join(strings.Split(string(b), "\n")[:min(80, strings.Count(string(b), "\n"))], "\n"))
		}
	}
}

// manage is glance-manage on the rendered files and the credentials, as
// the generated Jobs run it: glance-manage's default directories are
// glance.conf.d and glance-manage.conf.d, so both of glance-krm's are named;
// an empty --config-file keeps the packaged glance-manage.conf out.
func (r rendering) manage(t *testing.T, root string, args ...string) *exec.Cmd {
	t.Helper()
	none := write(t, filepath.Join(root, "test-overrides.d", "none.conf"), "")
	return r.inPod(t, root, nil, "glance-manage", append([]string{"--config-file", none, "--config-dir", v1alpha1.MountConfigDir,
		"--config-dir", v1alpha1.MountCredentialsDir}, args...)...)
}

// stop signals glance-api by its pid (it passes the signal to its process
// group), waits, and then clears any worker that outlived it.
func (g *glanceAPI) stop() {
	select {
	case <-g.exited:
	default:
		_ = g.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-g.exited:
		case <-time.After(20 * time.Second):
			_ = g.cmd.Process.Kill()
			<-g.exited
		}
	}
	_ = syscall.Kill(-g.cmd.Process.Pid, syscall.SIGKILL)
}

// containerEnv is the container's literal environment; glance-krm puts
// no secret there.
func containerEnv(t *testing.T, c *yaml.RNode) []string {
	t.Helper()
	var env []string
	l := lookup(t, c, "env")
	if l == nil {
		return nil
	}
	elems, _ := l.Elements()
	for _, e := range elems {
		if lookup(t, e, "valueFrom") != nil {
			t.Fatalf("env %s comes from a reference: glance-krm delivers secrets through its credentials file", value(t, e, "name"))
		}
		env = append(env, value(t, e, "name")+"="+value(t, e, "value"))
	}
	return env
}

func (g *glanceAPI) tail() string {
	b, _ := os.ReadFile(g.log)
	return tail(string(b), 30)
}
