//go:build e2e

package glance_test

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/c5c3/glance-krm/internal/testenv"
)

// renderAndValidate renders the example and has the release's own oslo-
// config-validator judge it, against the committed option catalog.
func (m *multiStoreRun) renderAndValidate() {
	t := m.t
	if !check(t, "render examples/local-s3 with kustomize and glance-krm", func(t *testing.T) {
		m.r = render(t, m.rel, m.dir, filepath.Join(m.root, "v1"))
	}) {
		t.FailNow()
	}

	optData := glanceOptData(t, m.r, m.root)
	validate := func(optData, file string) (string, error) {
		out, err := m.rel.run(t, m.r.root, "", nil, "oslo-config-validator", "--opt-data", optData, "--input-file", file).CombinedOutput()
		return string(out), err
	}
	check(t, "oslo-config-validator accepts the rendered glance-api.conf", func(t *testing.T) {
		if out, err := validate(optData, m.r.apiConf); err != nil {
			t.Errorf("%v\n%s", err, out)
		}
	})
	check(t, "oslo-config-validator accepts the rendered backends.conf", func(t *testing.T) {
		if out, err := validate(optData, m.r.backends); err != nil {
			t.Errorf("%v\n%s", err, out)
		}
	})
	check(t, "the committed option catalog of "+m.rel.catalog+" is what this Glance reads", func(t *testing.T) {
		script, err := os.ReadFile("../../../hack/catalog.py")
		if err != nil {
			t.Fatal(err)
		}
		out, err := m.rel.run(t, "", "", []string{testenv.OsloNamespacesEnv(t)}, "/usr/bin/python3", "-c", string(script), m.rel.catalog, m.rel.suite).Output()
		if err != nil {
			t.Fatal(err)
		}
		committed, err := os.ReadFile("../../../krm/catalogs/" + m.rel.catalog + ".json")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(string(committed), string(out)); diff != "" {
			t.Errorf("krm/catalogs/%s.json is stale: run make generate-catalogs (-committed +now):\n%s", m.rel.catalog, diff)
		}
	})
	check(t, "oslo-config-validator rejects a misspelt store option", func(t *testing.T) {
		b, _ := os.ReadFile(m.r.backends)
		bad := write(t, filepath.Join(m.root, "misspelt", "backends.conf"),
			strings.Replace(string(b), "s3_store_bucket =", "s3_store_bukket =", 1))
		out, err := validate(optData, bad)
		if err == nil || !strings.Contains(out, "s3_store_bukket") {
			t.Errorf("the validator did not refuse s3_store_bukket (err %v):\n%s", err, out)
		}
	})
}

// startFirst starts glance-api on the first render and reads back, through
// Glance's own code, what it was given.
func (m *multiStoreRun) startFirst() *glanceAPI {
	t := m.t
	var g *glanceAPI
	if !check(t, "glance-api starts on the rendered files and the init container's credentials file", func(t *testing.T) {
		initLog := startPod(t, m.r, m.secrets)
		assertNoCredential(t, initLog, m.secrets)
		g = startGlance(t, filepath.Join(m.root, "v1"), m.r)
	}) {
		t.FailNow()
	}
	t.Cleanup(g.stop)
	check(t, "GET /v2/info/stores lists every store with exactly the default flagged", func(t *testing.T) {
		want := map[string]string{"primary": "true", "secondary": ""}
		if diff := cmp.Diff(want, stores(t, g)); diff != "" {
			t.Errorf("stores (-want +got):\n%s", diff)
		}
	})
	check(t, "glance-manage db_sync made Glance's tables in MariaDB, as the Secret's user with the Secret's password", func(t *testing.T) {
		tables := m.db.query(t, "SHOW TABLES FROM glance")
		for _, want := range []string{"images", "image_locations", "alembic_version"} {
			if !slices.Contains(tables, want) {
				t.Errorf("table %s is missing from database glance: %v", want, tables)
			}
		}
		if !strings.ContainsAny(m.dbCreds["password"], `$%@:/?#[]'"\`) {
			t.Fatalf("the test password %q has none of the characters a URL gives a meaning to", m.dbCreds["password"])
		}
	})
	check(t, "glance's own option registration reads the service password and the composed connection back exactly", func(t *testing.T) {
		got := readSecretOptions(t, m.r)
		want := map[string]string{
			"password":    secretValue(t, m.secrets, "glance-service-user")["password"],
			"db_driver":   "mysql+pymysql",
			"db_username": m.dbCreds["username"],
			"db_password": m.dbCreds["password"],
			"db_host":     "127.0.0.1",
			"db_port":     fmt.Sprint(m.db.port),
			"db_database": "glance",
			"db_query":    "charset=utf8",
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("read back, the connection parsed by SQLAlchemy (-want +got):\n%s", diff)
		}
	})
	check(t, "glance's key manager is barbican, reached through the internal Identity endpoint (spec.imageSignatureVerification)", func(t *testing.T) {
		const script = `
import json, sys
from oslo_config import cfg
from glance.common import config  # glance's own options
from castellan import key_manager
conf = cfg.CONF
conf(args=[], project="glance", prog="glance-api", default_config_files=[])
km = key_manager.API(conf)  # what glance's images API builds at start
json.dump({"manager": type(km).__name__, "auth_endpoint": conf.barbican.auth_endpoint,
           "barbican_endpoint_type": conf.barbican.barbican_endpoint_type}, sys.stdout)
`
		got := pythonInPod(t, m.r, script)
		want := map[string]string{"manager": "BarbicanKeyManager", "auth_endpoint": "http://127.0.0.1:5000/v3", "barbican_endpoint_type": "internal"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
	return g
}

// uploads sends an image to each store through g and reads both back.
func (m *multiStoreRun) uploads(g *glanceAPI) {
	t := m.t
	nonDefault, withDefault := randomBytes(t, 300_000), randomBytes(t, 200_000)
	var idNonDefault, idDefault string
	check(t, "an upload with X-Image-Meta-Store: secondary lands in the secondary bucket", func(t *testing.T) {
		idNonDefault = upload(t, g, nonDefault, "secondary", http.StatusNoContent)
		if !m.s3.has(t, "glance-images-2", idNonDefault) || m.s3.has(t, "glance-images", idNonDefault) {
			t.Errorf("image %s is not in glance-images-2 alone", idNonDefault)
		}
	})
	check(t, "an upload with no store header lands in the default store's bucket", func(t *testing.T) {
		idDefault = upload(t, g, withDefault, "", http.StatusNoContent)
		if !m.s3.has(t, "glance-images", idDefault) || m.s3.has(t, "glance-images-2", idDefault) {
			t.Errorf("image %s is not in glance-images alone", idDefault)
		}
	})
	check(t, "both images download back byte-identical", func(t *testing.T) {
		for id, want := range map[string][]byte{idNonDefault: nonDefault, idDefault: withDefault} {
			if got := download(t, g, id); !bytes.Equal(got, want) {
				t.Errorf("image %s: downloaded %d bytes that differ from the %d uploaded", id, len(got), len(want))
			}
		}
	})
	g.stop()
}

// defaultFlip flips the default store and renders again: what is renamed,
// what is not, and where an upload without a store lands.
func (m *multiStoreRun) defaultFlip() {
	t := m.t
	// Flip the default in the kustomization and render again.
	flipped := strings.NewReplacer("isDefault: true", "isDefault: false", "isDefault: false", "isDefault: true").Replace(m.original)
	write(t, m.backends, flipped)
	var r2 rendering
	if !check(t, "render again after flipping isDefault to secondary", func(t *testing.T) {
		r2 = render(t, m.rel, m.dir, filepath.Join(m.root, "v2"))
	}) {
		t.FailNow()
	}
	check(t, "the default flip leaves the backends Secret's name unchanged", func(t *testing.T) {
		if r2.secret != m.r.secret {
			t.Errorf("Secret %s became %s", m.r.secret, r2.secret)
		}
	})
	check(t, "the default flip renames the config ConfigMap", func(t *testing.T) {
		if r2.configMap == m.r.configMap {
			t.Errorf("ConfigMap still %s", m.r.configMap)
		}
	})
	check(t, "after the flip an upload with no store header lands in the new default's bucket", func(t *testing.T) {
		startPod(t, r2, m.secrets)
		g2 := startGlance(t, filepath.Join(m.root, "v2"), r2)
		defer g2.stop()
		id := upload(t, g2, randomBytes(t, 1000), "", http.StatusNoContent)
		if !m.s3.has(t, "glance-images-2", id) {
			t.Errorf("image %s is not in glance-images-2", id)
		}
	})
}

// missingCredentials starts glance-api without one store's credentials, then
// with a key glance_store cannot carry: that store disabled, the other
// serving.
func (m *multiStoreRun) missingCredentials() {
	t := m.t
	// One store's credentials Secret absent: its optional projected source
	// is skipped, as the kubelet does with optional: true.
	var healthy []*yaml.RNode
	for _, s := range m.secrets {
		if s.GetName() != "secondary-s3-credentials" {
			healthy = append(healthy, s)
		}
	}
	write(t, m.backends, m.original) // primary is the default again
	var g3 *glanceAPI
	if !check(t, "glance-api starts with the secondary store's credentials Secret absent", func(t *testing.T) {
		r3 := render(t, m.rel, m.dir, filepath.Join(m.root, "v3"))
		startPod(t, r3, healthy)
		g3 = startGlance(t, filepath.Join(m.root, "v3"), r3)
	}) {
		t.FailNow()
	}
	t.Cleanup(g3.stop)
	check(t, "the healthy store still accepts uploads", func(t *testing.T) {
		id := upload(t, g3, randomBytes(t, 1000), "primary", http.StatusNoContent)
		if !m.s3.has(t, "glance-images", id) {
			t.Errorf("image %s is not in glance-images", id)
		}
	})
	check(t, "the store without credentials refuses uploads", func(t *testing.T) {
		// glance_store disables a store without keys; Glance answers 410.
		id, status := tryUpload(t, g3, randomBytes(t, 1000), "secondary")
		if status != http.StatusGone {
			t.Errorf("upload to the store without credentials answered %d, want 410", status)
		}
		if m.s3.has(t, "glance-images-2", id) {
			t.Errorf("image %s reached glance-images-2 without credentials", id)
		}
	})
	g3.stop()

	// A secret key that glance_store cannot carry in a location URL: the
	// init container leaves it out, so that store is disabled, not broken.
	unusable := withSecretData(t, m.secrets, "secondary-s3-credentials", map[string]string{
		"access-key-id": "glance-krm-e2e", "secret-access-key": "with#hash"})
	var g4 *glanceAPI
	if !check(t, "a store key glance_store cannot carry (#) is left out by the init container, naming the option", func(t *testing.T) {
		r4 := render(t, m.rel, m.dir, filepath.Join(m.root, "v4"))
		log := startPod(t, r4, unusable)
		if !strings.Contains(log, "[secondary] s3_store_secret_key contains") || strings.Contains(log, "with#hash") {
			t.Errorf("init container log: %s", log)
		}
		g4 = startGlance(t, filepath.Join(m.root, "v4"), r4)
	}) {
		t.FailNow()
	}
	t.Cleanup(g4.stop)
	check(t, "that store answers 410 and the other still accepts uploads", func(t *testing.T) {
		if _, status := tryUpload(t, g4, randomBytes(t, 1000), "secondary"); status != http.StatusGone {
			t.Errorf("upload to the store with an unusable key answered %d, want 410", status)
		}
		id := upload(t, g4, randomBytes(t, 1000), "primary", http.StatusNoContent)
		if !m.s3.has(t, "glance-images", id) {
			t.Errorf("image %s is not in glance-images", id)
		}
	})
	g4.stop()
}
