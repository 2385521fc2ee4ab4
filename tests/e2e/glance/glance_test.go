//go:build e2e

// Package glance_test proves the rendered configuration on a real Glance:
// Debian's glance-api 25.1.0 with glance_store 4.1.0, against a real S3
// server (versitygw), configured only by what `kustomize build` with
// glance-krm renders from examples/local-s3. Run it with `make e2e-glance`.
package glance_test

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/ini.v1"
	"sigs.k8s.io/kustomize/kyaml/yaml"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/c5c3/glance-krm/internal/testenv"
	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

func TestMain(m *testing.M) { tally.Main(m) }

// releases are the Glances the checks run on: Debian bookworm's on this
// machine (Zed, 2022.2, the oldest), and each root file system that
// `make e2e-glance` built (tests/e2e/glance/rootfs.sh) and named in
// GLANCE_ROOTFS_<SUITE>.
func releases(t *testing.T) []release {
	out := []release{{name: "bookworm (Zed 2022.2, glance-api 25.1.0, oldest)", catalog: "2022.2", suite: "bookworm"}}
	for _, r := range []struct {
		env, name, catalog, suite string
		wsgi                      bool
	}{
		{"GLANCE_ROOTFS_TRIXIE", "trixie (2025.1, glance-api 30.0.0)", "2025.1", "trixie", false},
		{"GLANCE_ROOTFS_2025_2", "2025.2 (glance 31.1.0, glance_store 5.2.0 from their release tarballs, on trixie)", "2025.2", "trixie", false},
		{"GLANCE_ROOTFS_2026_1", "2026.1 (glance 32.0.0, glance_store 5.4.0 from their release tarballs, on trixie, under uwsgi)", "2026.1", "trixie", true},
		{"GLANCE_ROOTFS_SID", "sid (2026.2, glance-api 33.0.0, under uwsgi)", "2026.2", "sid", true},
	} {
		if dir := os.Getenv(r.env); dir != "" {
			out = append(out, release{name: r.name, rootfs: dir, wsgi: r.wsgi, catalog: r.catalog, suite: r.suite})
		} else {
			testenv.Missing(t, r.env+" ("+r.name+")", "make e2e-glance")
		}
	}
	return out
}

const example = "../../../examples/local-s3"

// copyExample copies the example so the test can point it at its own S3
// port and release and flip its default, with the exec path made absolute.
func copyExample(t *testing.T, s3Endpoint string, rel release, dbPort int) string {
	t.Helper()
	release := rel.catalog
	fnBin := testenv.FunctionBinary(t)
	dir := t.TempDir()
	testenv.CopyTree(t, example, dir, func(_ string, b []byte) []byte {
		b = bytes.ReplaceAll(b, []byte("../../bin/glance-krm-fn"), []byte(fnBin))
		b = bytes.ReplaceAll(b, []byte("127.0.0.1:7070"), []byte(s3Endpoint))
		b = bytes.ReplaceAll(b, []byte("port: 3306"), []byte(fmt.Sprintf("port: %d", dbPort)))
		// Under uwsgi the workload runs the rendered uwsgi settings, as the
		// generated one does: glance-krm mounts the credentials where that
		// release's glance reads them under uwsgi.
		if rel.wsgi {
			b = bytes.ReplaceAll(b, []byte(`command: ["glance-api"]`), []byte(`command: ["uwsgi", "--ini", "`+v1alpha1.MountConfigDir+`glance-api-uwsgi.ini"]`))
		}
		// The Glance declares the release it runs, so the release rules
		// of that release's option catalog apply to every render; its
		// image names the same release (the image-release rule).
		b = bytes.ReplaceAll(b, []byte(`tag: "2025.2"`), []byte(`tag: "`+release+`"`))
		b = bytes.ReplaceAll(b, []byte(`image: ghcr.io/c5c3/glance:2025.2`), []byte(`image: ghcr.io/c5c3/glance:`+release))
		return bytes.ReplaceAll(b, []byte(`openStackRelease: "2025.2"`), []byte(`openStackRelease: "`+release+`"`))
	})
	return dir
}

// TestGlanceMultiStore runs the checks on every release, side by side
// (go test -parallel, two at a time on two cores): each has its own S3
// server, MariaDB, ports and files.
func TestGlanceMultiStore(t *testing.T) {
	for _, rel := range releases(t) {
		t.Run(rel.name, func(t *testing.T) {
			t.Parallel()
			multiStore(t, rel)
		})
	}
}

func multiStore(t *testing.T, rel release) {
	m := newMultiStoreRun(t, rel)
	m.renderAndValidate()
	g := m.startFirst()
	m.behindKeystone()
	m.uploads(g)
	m.defaultFlip()
	m.missingCredentials()
	m.uploadShaping()
	m.addressing()
	knownS3Bugs(t, rel, m.dir, m.original, m.s3, m.db, m.secrets, m.root)
	if rel.rootfs == "" {
		return // glance_store 4.1.0 has no s3_store_region_name
	}
	m.region()
	m.privateCA()
}

// multiStoreRun is what one release's checks share: the example copied
// and pointed at a loopback S3 server and MariaDB, its credentials, and
// its first render; each step below renders its own variant of the
// backends from the example's original and starts its own glance-api.
type multiStoreRun struct {
	t              *testing.T
	rel            release
	secrets        []*yaml.RNode
	creds, dbCreds map[string]string
	s3             *s3Server
	db             *mariaDB
	dir, root      string
	backends       string // the copy's backends.yaml
	original       string // and what the example has in it
	r              rendering
}

func newMultiStoreRun(t *testing.T, rel release) *multiStoreRun {
	m := &multiStoreRun{t: t, rel: rel, root: t.TempDir()}
	m.secrets = readObjects(t, filepath.Join(example, "test-credentials.yaml"))
	m.creds = secretValue(t, m.secrets, "primary-s3-credentials")
	m.s3 = startS3(t, m.creds["access-key-id"], m.creds["secret-access-key"], "glance-images", "glance-images-2")
	m.dbCreds = secretValue(t, m.secrets, "glance-db")
	m.db = startMariaDB(t, "glance", m.dbCreds["username"], m.dbCreds["password"])
	m.dir = copyExample(t, m.s3.endpoint, rel, m.db.port)
	m.backends = filepath.Join(m.dir, "backends.yaml")
	b, err := os.ReadFile(m.backends)
	if err != nil {
		t.Fatal(err)
	}
	m.original = string(b)
	return m
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// withSecretData is a copy of secrets in which the Secret named name holds
// data instead of its own.
func withSecretData(t *testing.T, secrets []*yaml.RNode, name string, data map[string]string) []*yaml.RNode {
	t.Helper()
	out := make([]*yaml.RNode, 0, len(secrets))
	for _, sec := range secrets {
		sec = sec.Copy()
		if sec.GetName() == name {
			if err := sec.PipeE(yaml.SetField("stringData", yaml.NewMapRNode(&data))); err != nil {
				t.Fatal(err)
			}
		}
		out = append(out, sec)
	}
	return out
}

func secretValue(t *testing.T, secrets []*yaml.RNode, name string) map[string]string {
	t.Helper()
	for _, s := range secrets {
		if s.GetName() == name {
			m := map[string]string{}
			_ = lookup(t, s, "stringData").VisitFields(func(f *yaml.MapNode) error {
				m[f.Key.YNode().Value] = f.Value.YNode().Value
				return nil
			})
			return m
		}
	}
	t.Fatalf("no Secret %s", name)
	return nil
}

func randomBytes(t *testing.T, n int) []byte {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}

func stores(t *testing.T, g *glanceAPI) map[string]string {
	t.Helper()
	resp, err := http.Get(g.url + "/v2/info/stores")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Stores []struct {
			ID      string `json:"id"`
			Default string `json:"default"`
		} `json:"stores"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, s := range body.Stores {
		out[s.ID] = s.Default
	}
	return out
}

func do(t *testing.T, req *http.Request) (int, []byte) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// tryUpload creates an image and uploads data to it, naming a store when
// store is not empty; it returns the image id and the upload's status.
func tryUpload(t *testing.T, g *glanceAPI, data []byte, store string) (string, int) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, g.url+"/v2/images",
		strings.NewReader(`{"name": "e2e", "disk_format": "raw", "container_format": "bare"}`))
	req.Header.Set("Content-Type", "application/json")
	status, body := do(t, req)
	if status != http.StatusCreated {
		t.Fatalf("creating an image: %d %s", status, body)
	}
	var img struct{ ID string }
	if err := json.Unmarshal(body, &img); err != nil {
		t.Fatal(err)
	}
	req, _ = http.NewRequest(http.MethodPut, g.url+"/v2/images/"+img.ID+"/file", bytes.NewReader(data))
	req.Header.Set("Content-Type", "application/octet-stream")
	if store != "" {
		req.Header.Set("X-Image-Meta-Store", store)
	}
	status, body = do(t, req)
	if status >= 400 {
		t.Logf("upload to %q: %d %s", store, status, bytes.TrimSpace(body))
	}
	return img.ID, status
}

func upload(t *testing.T, g *glanceAPI, data []byte, store string, want int) string {
	t.Helper()
	id, status := tryUpload(t, g, data, store)
	if status != want {
		t.Fatalf("upload to %q answered %d, want %d\n%s", store, status, want, g.tail())
	}
	return id
}

func download(t *testing.T, g *glanceAPI, id string) []byte {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, g.url+"/v2/images/"+id+"/file", nil)
	status, body := do(t, req)
	if status != http.StatusOK {
		t.Fatalf("downloading %s: %d", id, status)
	}
	return body
}

// glanceOptData is Glance's option schema as oslo-config-generator prints
// it, plus the groups Glance registers at run time: each rendered store
// section is a glance.store.s3.store group (with store_description, which
// glance_store adds to every store), and the reserved staging and tasks
// stores are filesystem stores.
func glanceOptData(t *testing.T, r rendering, root string) string {
	t.Helper()
	args := []string{"--format", "yaml"}
	for _, ns := range testenv.OsloNamespaces(t) {
		args = append(args, "--namespace", ns)
	}
	out, err := r.rel.run(t, "", "", nil, "oslo-config-generator", args...).Output()
	if err != nil {
		t.Fatalf("oslo-config-generator: %v", err)
	}
	var data map[string]any
	if err := sigsyaml.Unmarshal(out, &data); err != nil {
		t.Fatal(err)
	}
	groups := data["options"].(map[string]any)
	copyGroup := func(from string) map[string]any {
		var g map[string]any
		b, _ := json.Marshal(groups[from])
		_ = json.Unmarshal(b, &g)
		if g == nil {
			t.Fatalf("oslo-config-generator printed no %s group", from)
		}
		return g
	}
	backends, err := ini.Load(r.backends)
	if err != nil {
		t.Fatal(err)
	}
	for _, section := range backends.SectionStrings() {
		if section == ini.DefaultSection {
			continue
		}
		g := copyGroup("glance.store.s3.store")
		opts := g["opts"].([]any)
		desc := map[string]any{}
		for k, v := range opts[0].(map[string]any) {
			desc[k] = v
		}
		desc["name"], desc["dest"], desc["help"] = "store_description", "store_description", "Store description."
		g["opts"] = append(opts, desc)
		groups[section] = g
	}
	for _, reserved := range []string{"os_glance_staging_store", "os_glance_tasks_store"} {
		groups[reserved] = copyGroup("file")
	}
	b, err := json.Marshal(data)
	if err != nil {
		t.Fatal(err)
	}
	return write(t, filepath.Join(root, "opt-data.json"), string(b))
}

// readSecretOptions loads the rendered config dirs and the container's
// environment as glance-api does, with the options registered the way
// glance registers them (keystonemiddleware's auth_token options, the
// keystoneauth password plugin's, oslo.db's), and returns the service
// password it reads and the database connection as SQLAlchemy (which
// hands it to PyMySQL) parses it.
func readSecretOptions(t *testing.T, r rendering) map[string]string {
	t.Helper()
	const script = `
import json, sys
from oslo_config import cfg
from oslo_db import options as db_options
from keystoneauth1 import loading
import keystonemiddleware.auth_token  # registers [keystone_authtoken]
from glance.common import config  # glance's own options
conf = cfg.CONF
db_options.set_defaults(conf)
loading.register_auth_conf_options(conf, "keystone_authtoken")
conf(args=[], project="glance", prog="glance-api", default_config_files=[])
plugin = loading.get_plugin_loader(conf.keystone_authtoken.auth_type)
conf.register_opts(loading.get_auth_plugin_conf_options(plugin), group="keystone_authtoken")
from sqlalchemy.engine import url as sa_url
u = sa_url.make_url(conf.database.connection)
json.dump({"password": conf.keystone_authtoken.password, "db_driver": u.drivername, "db_username": u.username,
           "db_password": u.password, "db_host": u.host, "db_port": str(u.port), "db_database": u.database,
           "db_query": "&".join("%s=%s" % kv for kv in sorted(u.query.items()))}, sys.stdout)
`
	return pythonInPod(t, r, script)
}

// pythonInPod runs a python3 script in the glance-api container's view
// (its files and environment) and decodes the JSON object it prints.
func pythonInPod(t *testing.T, r rendering, script string) map[string]string {
	t.Helper()
	out, err := r.inPod(t, r.root, containerEnv(t, r.container), "/usr/bin/python3", "-c", script).Output()
	if err != nil {
		var stderr []byte
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			stderr = ee.Stderr
		}
		t.Fatalf("python3 with glance's option registration: %v\n%s", err, stderr)
	}
	var got map[string]string
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	return got
}

// assertNoCredential fails when text holds a credential value.
func assertNoCredential(t *testing.T, text string, secrets []*yaml.RNode) {
	t.Helper()
	for name, kv := range secretData(t, secrets) {
		for k, v := range kv {
			if v = strings.TrimSpace(v); len(v) > 4 && strings.Contains(text, v) {
				t.Errorf("key %s of Secret %s appears in %q", k, name, text)
			}
		}
	}
}
