//go:build e2e

package packaging_test

import (
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// The package's registry: go-containerregistry's, on loopback, with the
// OCI referrers API (where signatures and attestations hang off an image).
// It lives as long as the test binary; the images make image wrote are
// pushed to it as their OCI indexes, and the doors pull them by digest.
var reg struct {
	once sync.Once
	host string // 127.0.0.1:port
	conf string // a registries.conf that lets podman pull from it over http
	err  error
	mu   sync.Mutex
	refs map[string]string // target → host/c5c3/glance-krm-<target>@sha256:…
}

func registryHost(t *testing.T) string {
	t.Helper()
	reg.once.Do(func() {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			reg.err = err
			return
		}
		go func() {
			_ = (&http.Server{Handler: registry.New(registry.WithReferrersSupport(true), registry.Logger(log.New(io.Discard, "", 0)))}).Serve(ln)
		}() //nolint:gosec // a test's loopback registry
		reg.host = ln.Addr().String()
		dir, err := os.MkdirTemp("", "glance-krm-registries-")
		if err != nil {
			reg.err = err
			return
		}
		reg.conf = filepath.Join(dir, "registries.conf")
		reg.err = os.WriteFile(reg.conf, []byte(fmt.Sprintf("[[registry]]\nlocation = %q\ninsecure = true\n", reg.host)), 0o644)
	})
	if reg.err != nil {
		t.Fatalf("the loopback registry: %v", reg.err)
	}
	return reg.host
}

// pushed pushes build/oci/<target>'s index to the registry (once) and
// returns its reference by digest, as users pin it.
func pushed(t *testing.T, target string) string {
	t.Helper()
	host := registryHost(t)
	reg.mu.Lock()
	defer reg.mu.Unlock()
	if ref, ok := reg.refs[target]; ok {
		return ref
	}
	idx, digest := index(t, target)
	repo := host + "/c5c3/glance-krm-" + target
	tag, err := name.NewTag(repo+":dev", name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.WriteIndex(tag, idx); err != nil {
		t.Fatalf("pushing %s: %v", tag, err)
	}
	ref := repo + "@" + digest.String()
	if reg.refs == nil {
		reg.refs = map[string]string{}
	}
	reg.refs[target] = ref
	return ref
}

// pullEnv is containerEnv that lets podman pull from the registry; what a
// test pulls is removed after it, so the cache does not grow run by run.
func pullEnv(t *testing.T, refs ...string) []string {
	t.Helper()
	registryHost(t)
	env := append(containerEnv(t), "CONTAINERS_REGISTRIES_CONF="+reg.conf)
	for _, ref := range refs {
		if _, _, err := run(t, env, "", "podman", "image", "exists", ref); err == nil {
			t.Fatalf("%s is in podman's storage before the door pulls it", ref)
		}
	}
	t.Cleanup(func() {
		for _, ref := range refs {
			_, _, _ = run(t, env, "", "podman", "rmi", "--ignore", ref)
		}
	})
	return env
}

// wasPulled: the door pulled ref from the registry into podman's storage.
func wasPulled(t *testing.T, env []string, ref string) {
	t.Helper()
	if _, stderr, err := run(t, env, "", "podman", "image", "exists", ref); err != nil {
		t.Errorf("%s was not pulled: %v %s", ref, err, stderr)
	}
}
