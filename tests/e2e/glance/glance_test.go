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
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gopkg.in/ini.v1"
	"sigs.k8s.io/kustomize/kyaml/yaml"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/c5c3/glance-krm/internal/testenv"
	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if printTallies() && code == 0 {
		code = 1
	}
	os.Exit(code)
}

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
	secrets := readObjects(t, filepath.Join(example, "test-credentials.yaml"))
	creds := secretValue(t, secrets, "primary-s3-credentials")
	s3 := startS3(t, creds["access-key-id"], creds["secret-access-key"], "glance-images", "glance-images-2")
	dbCreds := secretValue(t, secrets, "glance-db")
	db := startMariaDB(t, "glance", dbCreds["username"], dbCreds["password"])
	dir := copyExample(t, s3.endpoint, rel, db.port)
	root := t.TempDir()

	var r rendering
	if !check(t, "render examples/local-s3 with kustomize and glance-krm", func(t *testing.T) {
		r = render(t, rel, dir, filepath.Join(root, "v1"))
	}) {
		t.FailNow()
	}

	optData := glanceOptData(t, r, root)
	validate := func(optData, file string) (string, error) {
		out, err := rel.run(t, r.root, "", nil, "oslo-config-validator", "--opt-data", optData, "--input-file", file).CombinedOutput()
		return string(out), err
	}
	check(t, "oslo-config-validator accepts the rendered glance-api.conf", func(t *testing.T) {
		if out, err := validate(optData, r.apiConf); err != nil {
			t.Errorf("%v\n%s", err, out)
		}
	})
	check(t, "oslo-config-validator accepts the rendered backends.conf", func(t *testing.T) {
		if out, err := validate(optData, r.backends); err != nil {
			t.Errorf("%v\n%s", err, out)
		}
	})
	check(t, "the committed option catalog of "+rel.catalog+" is what this Glance reads", func(t *testing.T) {
		script, err := os.ReadFile("../../../hack/catalog.py")
		if err != nil {
			t.Fatal(err)
		}
		out, err := rel.run(t, "", "", nil, "/usr/bin/python3", "-c", string(script), rel.catalog, rel.suite).Output()
		if err != nil {
			t.Fatal(err)
		}
		committed, err := os.ReadFile("../../../krm/catalogs/" + rel.catalog + ".json")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(string(committed), string(out)); diff != "" {
			t.Errorf("krm/catalogs/%s.json is stale: run make generate-catalogs (-committed +now):\n%s", rel.catalog, diff)
		}
	})
	check(t, "oslo-config-validator rejects a misspelt store option", func(t *testing.T) {
		b, _ := os.ReadFile(r.backends)
		bad := write(t, filepath.Join(root, "misspelt", "backends.conf"),
			strings.Replace(string(b), "s3_store_bucket =", "s3_store_bukket =", 1))
		out, err := validate(optData, bad)
		if err == nil || !strings.Contains(out, "s3_store_bukket") {
			t.Errorf("the validator did not refuse s3_store_bukket (err %v):\n%s", err, out)
		}
	})

	var g *glanceAPI
	if !check(t, "glance-api starts on the rendered files and the init container's credentials file", func(t *testing.T) {
		initLog := startPod(t, r, secrets)
		assertNoCredential(t, initLog, secrets)
		g = startGlance(t, filepath.Join(root, "v1"), r)
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
		tables := db.query(t, "SHOW TABLES FROM glance")
		for _, want := range []string{"images", "image_locations", "alembic_version"} {
			if !slices.Contains(tables, want) {
				t.Errorf("table %s is missing from database glance: %v", want, tables)
			}
		}
		if !strings.ContainsAny(dbCreds["password"], `$%@:/?#[]'"\`) {
			t.Fatalf("the test password %q has none of the characters a URL gives a meaning to", dbCreds["password"])
		}
	})
	check(t, "glance's own option registration reads the service password and the composed connection back exactly", func(t *testing.T) {
		got := readSecretOptions(t, r)
		want := map[string]string{
			"password":    secretValue(t, secrets, "glance-service-user")["password"],
			"db_driver":   "mysql+pymysql",
			"db_username": dbCreds["username"],
			"db_password": dbCreds["password"],
			"db_host":     "127.0.0.1",
			"db_port":     fmt.Sprint(db.port),
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
		got := pythonInPod(t, r, script)
		want := map[string]string{"manager": "BarbicanKeyManager", "auth_endpoint": "http://127.0.0.1:5000/v3", "barbican_endpoint_type": "internal"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
	var ks *keystone
	release := t
	check(t, "a real Keystone (bookworm's, on MariaDB) bootstrapped with Glance's service user and the Secret's password", func(t *testing.T) {
		ks = startKeystone(t, release, db, secretValue(t, secrets, "glance-service-user")["password"])
		if !strings.ContainsAny(secretValue(t, secrets, "glance-service-user")["password"], `$"' `) {
			t.Fatal("the service user's test password has none of $, quotes and spaces")
		}
	})
	var gp *glanceAPI // a Glance behind the rendered [keystone_authtoken]
	var rp rendering
	check(t, "the rendered glance-api-paste.ini and [keystone_authtoken] validate real Keystone tokens: /healthcheck open, /v2/images 200 with a token, 401 without or with a forged one", func(t *testing.T) {
		if ks == nil {
			t.Skip("no Keystone")
		}
		// The example without its no-Keystone paste override: glance-krm's
		// own paste file and the keystone flavor, as the seed renders them,
		// pointed at the Keystone above.
		pdir := copyExample(t, s3.endpoint, rel, db.port)
		gy := filepath.Join(pdir, "glance.yaml")
		b, err := os.ReadFile(gy)
		if err != nil {
			t.Fatal(err)
		}
		override := "    paste_deploy:\n      config_file: /etc/glance/glance-api-paste.ini\n      flavor: \"\"\n"
		endpoint := "keystoneEndpoint: http://127.0.0.1:5000/v3\n"
		if !bytes.Contains(b, []byte(override)) || !bytes.Contains(b, []byte(endpoint)) {
			t.Fatalf("examples/local-s3/glance.yaml no longer holds the paste override and the endpoint this check replaces")
		}
		b = bytes.Replace(b, []byte(override), nil, 1)
		// spec.region: Debian's packaged glance-api.conf, which sid's glance
		// reads under uwsgi, sets [keystone_authtoken] region_name =
		// regionOne; the region the user states wins over it (measured:
		// without it sid's authtoken finds no identity endpoint).
		b = bytes.Replace(b, []byte(endpoint), []byte("keystoneEndpoint: "+ks.url+"\n  region: RegionOne\n"), 1)
		write(t, gy, string(b))
		// The drain checks retire secondary into primary (drain_test.go).
		bf := filepath.Join(pdir, "backends.yaml")
		bb, err := os.ReadFile(bf)
		if err != nil || !bytes.Contains(bb, []byte("  name: secondary\n")) {
			t.Fatalf("examples/local-s3/backends.yaml no longer names secondary: %v", err)
		}
		write(t, bf, strings.Replace(string(bb), "  name: secondary\n", "  name: secondary\n  annotations:\n    glance.openstack.c5c3.io/drain-to: primary\n", 1))
		rp = render(t, rel, pdir, filepath.Join(root, "paste"))
		startPod(t, rp, secrets)
		gp = startGlanceReady(t, filepath.Join(root, "paste"), rp, "/healthcheck")
		token := ks.user(t, "demo-"+rel.catalog)
		for _, c := range []struct {
			path, token string
			want        int
		}{
			{"/healthcheck", "", http.StatusOK},
			{"/v2/images", "", http.StatusUnauthorized},
			{"/v2/images", "gAAAAAforged-token", http.StatusUnauthorized},
			{"/v2/images", token, http.StatusOK},
		} {
			req, _ := http.NewRequest(http.MethodGet, gp.url+c.path, nil)
			if c.token != "" {
				req.Header.Set("X-Auth-Token", c.token)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatalf("GET %s (token %t): %v\n%s", c.path, c.token != "", err, gp.tail())
			}
			resp.Body.Close()
			if resp.StatusCode != c.want {
				t.Errorf("GET %s (token %t): %d, want %d\n%s\nkeystone:\n%s", c.path, c.token != "", resp.StatusCode, c.want, gp.tail(), ks.tail())
			}
		}
		assertNoCredential(t, gp.tail(), secrets)
	})
	if gp != nil {
		drainChecks(t, gp, rp, ks, s3, secrets)
		assertNoCredential(t, gp.tail(), secrets)
		gp.stop()
	}
	nonDefault, withDefault := randomBytes(t, 300_000), randomBytes(t, 200_000)
	var idNonDefault, idDefault string
	check(t, "an upload with X-Image-Meta-Store: secondary lands in the secondary bucket", func(t *testing.T) {
		idNonDefault = upload(t, g, nonDefault, "secondary", http.StatusNoContent)
		if !s3.has(t, "glance-images-2", idNonDefault) || s3.has(t, "glance-images", idNonDefault) {
			t.Errorf("image %s is not in glance-images-2 alone", idNonDefault)
		}
	})
	check(t, "an upload with no store header lands in the default store's bucket", func(t *testing.T) {
		idDefault = upload(t, g, withDefault, "", http.StatusNoContent)
		if !s3.has(t, "glance-images", idDefault) || s3.has(t, "glance-images-2", idDefault) {
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

	// Flip the default in the kustomization and render again.
	backends := filepath.Join(dir, "backends.yaml")
	b, err := os.ReadFile(backends)
	if err != nil {
		t.Fatal(err)
	}
	flipped := strings.NewReplacer("isDefault: true", "isDefault: false", "isDefault: false", "isDefault: true").Replace(string(b))
	write(t, backends, flipped)
	var r2 rendering
	if !check(t, "render again after flipping isDefault to secondary", func(t *testing.T) {
		r2 = render(t, rel, dir, filepath.Join(root, "v2"))
	}) {
		t.FailNow()
	}
	check(t, "the default flip leaves the backends Secret's name unchanged", func(t *testing.T) {
		if r2.secret != r.secret {
			t.Errorf("Secret %s became %s", r.secret, r2.secret)
		}
	})
	check(t, "the default flip renames the config ConfigMap", func(t *testing.T) {
		if r2.configMap == r.configMap {
			t.Errorf("ConfigMap still %s", r.configMap)
		}
	})
	check(t, "after the flip an upload with no store header lands in the new default's bucket", func(t *testing.T) {
		startPod(t, r2, secrets)
		g2 := startGlance(t, filepath.Join(root, "v2"), r2)
		defer g2.stop()
		id := upload(t, g2, randomBytes(t, 1000), "", http.StatusNoContent)
		if !s3.has(t, "glance-images-2", id) {
			t.Errorf("image %s is not in glance-images-2", id)
		}
	})

	// One store's credentials Secret absent: its optional projected source
	// is skipped, as the kubelet does with optional: true.
	var healthy []*yaml.RNode
	for _, s := range secrets {
		if s.GetName() != "secondary-s3-credentials" {
			healthy = append(healthy, s)
		}
	}
	write(t, backends, string(b)) // primary is the default again
	var g3 *glanceAPI
	if !check(t, "glance-api starts with the secondary store's credentials Secret absent", func(t *testing.T) {
		r3 := render(t, rel, dir, filepath.Join(root, "v3"))
		startPod(t, r3, healthy)
		g3 = startGlance(t, filepath.Join(root, "v3"), r3)
	}) {
		t.FailNow()
	}
	t.Cleanup(g3.stop)
	check(t, "the healthy store still accepts uploads", func(t *testing.T) {
		id := upload(t, g3, randomBytes(t, 1000), "primary", http.StatusNoContent)
		if !s3.has(t, "glance-images", id) {
			t.Errorf("image %s is not in glance-images", id)
		}
	})
	check(t, "the store without credentials refuses uploads", func(t *testing.T) {
		// glance_store disables a store without keys; Glance answers 410.
		id, status := tryUpload(t, g3, randomBytes(t, 1000), "secondary")
		if status != http.StatusGone {
			t.Errorf("upload to the store without credentials answered %d, want 410", status)
		}
		if s3.has(t, "glance-images-2", id) {
			t.Errorf("image %s reached glance-images-2 without credentials", id)
		}
	})
	g3.stop()

	// A secret key that glance_store cannot carry in a location URL: the
	// init container leaves it out, so that store is disabled, not broken.
	unusable := withSecretData(t, secrets, "secondary-s3-credentials", map[string]string{
		"access-key-id": "glance-krm-e2e", "secret-access-key": "with#hash"})
	var g4 *glanceAPI
	if !check(t, "a store key glance_store cannot carry (#) is left out by the init container, naming the option", func(t *testing.T) {
		r4 := render(t, rel, dir, filepath.Join(root, "v4"))
		log := startPod(t, r4, unusable)
		if !strings.Contains(log, "[secondary] s3_store_secret_key contains") || strings.Contains(log, "with#hash") {
			t.Errorf("init container log: %s", log)
		}
		g4 = startGlance(t, filepath.Join(root, "v4"), r4)
	}) {
		t.FailNow()
	}
	t.Cleanup(g4.stop)
	check(t, "that store answers 410 and the other still accepts uploads", func(t *testing.T) {
		if _, status := tryUpload(t, g4, randomBytes(t, 1000), "secondary"); status != http.StatusGone {
			t.Errorf("upload to the store with an unusable key answered %d, want 410", status)
		}
		id := upload(t, g4, randomBytes(t, 1000), "primary", http.StatusNoContent)
		if !s3.has(t, "glance-images", id) {
			t.Errorf("image %s is not in glance-images", id)
		}
	})
	g4.stop()

	// The typed S3 options that shape uploads: multipart above
	// largeObjectSize in parts of largeObjectChunkSize (MiB), and a bucket
	// created on first upload.
	write(t, backends, strings.NewReplacer(
		"    bucket: glance-images\n", "    bucket: glance-images\n    largeObjectSize: 5\n    largeObjectChunkSize: 5\n",
		"    bucket: glance-images-2\n", "    bucket: glance-created-on-put\n    createBucketOnPut: true\n",
	).Replace(string(b)))
	var g5 *glanceAPI
	if !check(t, "glance-api starts with largeObjectSize, largeObjectChunkSize and createBucketOnPut rendered", func(t *testing.T) {
		r5 := render(t, rel, dir, filepath.Join(root, "v5"))
		for _, want := range []string{"s3_store_large_object_size = 5\n", "s3_store_large_object_chunk_size = 5\n", "s3_store_create_bucket_on_put = true\n"} {
			if conf, _ := os.ReadFile(r5.backends); !strings.Contains(string(conf), want) {
				t.Fatalf("backends.conf lacks %q", want)
			}
		}
		startPod(t, r5, secrets)
		g5 = startGlance(t, filepath.Join(root, "v5"), r5)
	}) {
		t.FailNow()
	}
	t.Cleanup(g5.stop)
	check(t, "an image larger than largeObjectSize is uploaded in parts of largeObjectChunkSize and downloads byte-identical", func(t *testing.T) {
		data := randomBytes(t, 12<<20) // 12 MiB: three 5 MiB parts
		id := upload(t, g5, data, "primary", http.StatusNoContent)
		if etag := s3.etag(t, "glance-images", id); !strings.HasSuffix(etag, "-3") {
			t.Errorf("object %s has ETag %q: not a 3-part multipart upload", id, etag)
		}
		if got := download(t, g5, id); !bytes.Equal(got, data) {
			t.Errorf("downloaded %d bytes that differ from the %d uploaded", len(got), len(data))
		}
	})
	check(t, "createBucketOnPut creates the missing bucket on the first upload", func(t *testing.T) {
		id := upload(t, g5, randomBytes(t, 1000), "secondary", http.StatusNoContent)
		if !s3.has(t, "glance-created-on-put", id) {
			t.Errorf("image %s is not in the bucket created on put", id)
		}
	})
	g5.stop()

	// What the function refuses, measured: a multipart chunk below 5 MiB,
	// written into the rendered backends.conf by hand, disables the store
	// in glance_store (BadStoreConfiguration); the other store still works.
	write(t, backends, string(b))
	check(t, "a largeObjectChunkSize below 5 (refused by glance-krm) disables the store in this glance_store", func(t *testing.T) {
		rc := render(t, rel, dir, filepath.Join(root, "chunk"))
		conf, err := os.ReadFile(rc.backends)
		if err != nil {
			t.Fatal(err)
		}
		write(t, rc.backends, strings.Replace(string(conf), "[primary]\n", "[primary]\ns3_store_large_object_chunk_size = 4\n", 1))
		startPod(t, rc, secrets)
		gc := startGlance(t, filepath.Join(root, "chunk"), rc)
		defer gc.stop()
		if _, status := tryUpload(t, gc, randomBytes(t, 1000), "primary"); status != http.StatusGone {
			t.Errorf("upload to the store with a 4 MiB chunk answered %d, want 410 (disabled)", status)
		}
		upload(t, gc, randomBytes(t, 1000), "secondary", http.StatusNoContent)
	})

	// bucketURLFormat virtual: glance_store addresses <bucket>.<host>,
	// which the pod's /etc/hosts resolves to the loopback S3 server.
	const domain = "s3.glance-krm.test"
	virtual := startS3In(t, "us-east-1", domain, creds["access-key-id"], creds["secret-access-key"], "glance-images-virtual")
	_, port, _ := strings.Cut(virtual.endpoint, ":")
	write(t, backends, strings.Replace(string(b), "    host: http://"+s3.endpoint+"\n    bucket: glance-images\n",
		"    host: http://"+domain+":"+port+"\n    bucket: glance-images-virtual\n    bucketURLFormat: virtual\n", 1))
	check(t, "bucketURLFormat virtual uploads to <bucket>.<host>", func(t *testing.T) {
		rv := render(t, rel, dir, filepath.Join(root, "virtual"))
		// Only <bucket>.<host> resolves: a path-style request to <host>
		// would fail, so the upload proves virtual-hosted addressing.
		rv.hosts = write(t, filepath.Join(root, "virtual-hosts"), "127.0.0.1 localhost\n127.0.0.1 glance-images-virtual."+domain+"\n")
		if conf, _ := os.ReadFile(rv.backends); !strings.Contains(string(conf), "s3_store_bucket_url_format = virtual\n") {
			t.Fatalf("backends.conf:\n%s", conf)
		}
		startPod(t, rv, secrets)
		gv := startGlance(t, filepath.Join(root, "virtual"), rv)
		defer gv.stop()
		data := randomBytes(t, 2000)
		id := upload(t, gv, data, "primary", http.StatusNoContent)
		if !virtual.has(t, "glance-images-virtual", id) {
			t.Errorf("image %s is not in glance-images-virtual", id)
		}
		if got := download(t, gv, id); !bytes.Equal(got, data) {
			t.Error("the image downloads different")
		}
	})

	if rel.catalog == "2026.2" {
		// A store option that only the newest glance_store has, set through
		// extraOptions: the release's catalog admits it and uploads work.
		write(t, backends, strings.Replace(string(b), "      name: primary-s3-credentials\n",
			"      name: primary-s3-credentials\n  extraOptions:\n    s3_store_request_checksum_calculation: when_required\n    s3_store_response_checksum_validation: when_required\n", 1))
		check(t, "the newest release's checksum options, through extraOptions, are rendered and uploads work", func(t *testing.T) {
			rn := render(t, rel, dir, filepath.Join(root, "newest"))
			if conf, _ := os.ReadFile(rn.backends); !strings.Contains(string(conf), "s3_store_request_checksum_calculation = when_required\n") {
				t.Fatalf("backends.conf:\n%s", conf)
			}
			startPod(t, rn, secrets)
			gn := startGlance(t, filepath.Join(root, "newest"), rn)
			defer gn.stop()
			id := upload(t, gn, randomBytes(t, 3000), "primary", http.StatusNoContent)
			if !s3.has(t, "glance-images", id) {
				t.Errorf("image %s is not in glance-images", id)
			}
		})
	}

	knownS3Bugs(t, rel, dir, string(b), s3, db, secrets, root)

	if rel.rootfs == "" {
		return // glance_store 4.1.0 has no s3_store_region_name
	}
	// spec.s3.region on a server that accepts only its own region: the
	// upload works because glance_store signs for the rendered region, and
	// fails when the region is left out (the test of the test).
	const region = "eu-glance-krm-1"
	regional := startS3In(t, region, "", creds["access-key-id"], creds["secret-access-key"], "glance-images-regional")
	withRegion := func(region string) string {
		out := strings.Replace(string(b), "    host: http://"+s3.endpoint+"\n    bucket: glance-images\n",
			"    host: http://"+regional.endpoint+"\n    bucket: glance-images-regional\n", 1)
		if region != "" {
			out = strings.Replace(out, "    bucket: glance-images-regional\n", "    bucket: glance-images-regional\n    region: "+region+"\n", 1)
		}
		return out
	}
	for _, c := range []struct {
		name, region string
		want         int
	}{
		{"without spec.s3.region the region's S3 server refuses the upload", "", 0},
		{"with spec.s3.region rendered the upload lands in the region's bucket", region, http.StatusNoContent},
	} {
		write(t, backends, withRegion(c.region))
		check(t, c.name, func(t *testing.T) {
			rr := render(t, rel, dir, filepath.Join(root, "region-"+cmpOr(c.region, "none")))
			if conf, _ := os.ReadFile(rr.backends); strings.Contains(string(conf), "s3_store_region_name") != (c.region != "") {
				t.Fatalf("backends.conf:\n%s", conf)
			}
			startPod(t, rr, secrets)
			gr := startGlance(t, filepath.Join(root, "region-"+cmpOr(c.region, "none")), rr)
			defer gr.stop()
			id, status := tryUpload(t, gr, randomBytes(t, 1000), "primary")
			switch {
			case c.want == 0 && status < 400:
				t.Errorf("the upload signed for us-east-1 was accepted (%d) by a server of region %s", status, region)
			case c.want != 0 && (status != c.want || !regional.has(t, "glance-images-regional", id)):
				t.Errorf("upload answered %d, want %d, and must land in glance-images-regional", status, c.want)
			}
		})
	}

	// TLS with a private CA: the S3 server's certificate is signed by a CA
	// made here; glance trusts it only through spec.s3.caBundleRef, which
	// glance-krm mounts and names in s3_store_cacert.
	ca := makeTLS(t)
	secure := startS3With(t, s3Options{region: "us-east-1", tls: ca}, creds["access-key-id"], creds["secret-access-key"], "glance-images-tls")
	caSecret, err := yaml.Parse("apiVersion: v1\nkind: Secret\nmetadata: {name: s3-ca}\nstringData: {}\n")
	if err != nil {
		t.Fatal(err)
	}
	if err := caSecret.PipeE(yaml.SetField("stringData", yaml.NewMapRNode(&map[string]string{"ca.crt": string(ca.caPEM)}))); err != nil {
		t.Fatal(err)
	}
	withCA := append(slices.Clone(secrets), caSecret)
	for _, c := range []struct {
		name string
		ca   bool
	}{
		{"without spec.s3.caBundleRef glance does not trust the S3 server's private CA", false},
		{"with spec.s3.caBundleRef the upload over HTTPS lands in the bucket", true},
	} {
		out := strings.Replace(string(b), "    host: http://"+s3.endpoint+"\n    bucket: glance-images\n",
			"    host: https://"+secure.endpoint+"\n    bucket: glance-images-tls\n", 1)
		if c.ca {
			out = strings.Replace(out, "    bucket: glance-images-tls\n", "    bucket: glance-images-tls\n    caBundleRef: {kind: Secret, name: s3-ca}\n", 1)
		}
		write(t, backends, out)
		check(t, c.name, func(t *testing.T) {
			dirName := "tls-" + map[bool]string{true: "ca", false: "none"}[c.ca]
			rt := render(t, rel, dir, filepath.Join(root, dirName))
			if conf, _ := os.ReadFile(rt.backends); strings.Contains(string(conf), "s3_store_cacert = /etc/glance/glance.conf.d/s3-ca/primary.pem") != c.ca {
				t.Fatalf("backends.conf:\n%s", conf)
			}
			startPod(t, rt, withCA)
			gt := startGlance(t, filepath.Join(root, dirName), rt)
			defer gt.stop()
			id, status := tryUpload(t, gt, randomBytes(t, 1000), "primary")
			switch {
			case !c.ca && status < 400:
				t.Errorf("the upload was accepted (%d) without the CA", status)
			case c.ca && (status != http.StatusNoContent || !secure.has(t, "glance-images-tls", id)):
				t.Errorf("upload answered %d, want 204, and must land in glance-images-tls", status)
			}
		})
	}
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
	for _, ns := range []string{"glance.api", "glance", "glance.store", "glance.multi_store", "oslo.log", "oslo.db",
		"oslo.concurrency", "oslo.policy", "oslo.middleware", "keystonemiddleware.auth_token", "castellan.config"} {
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
