//go:build e2e

package glance_test

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/c5c3/glance-krm/internal/testenv"
)

// behindKeystone puts a Glance of the example behind a real Keystone (the
// paste pipeline and [keystone_authtoken] as the seed renders them), then
// runs the drain checks on it.
func (m *multiStoreRun) behindKeystone() {
	t := m.t
	var ks *keystone
	release := t
	check(t, "a real Keystone (bookworm's, on MariaDB) bootstrapped with Glance's service user and the Secret's password", func(t *testing.T) {
		ks = startKeystone(t, release, m.db, secretValue(t, m.secrets, "glance-service-user")["password"])
		if !strings.ContainsAny(secretValue(t, m.secrets, "glance-service-user")["password"], `$"' `) {
			t.Fatal("the service user's test password has none of $, quotes and spaces")
		}
	})
	var gp *glanceAPI // a Glance behind the rendered [keystone_authtoken]
	var rp rendering
	var pdir string // the example it was rendered from
	check(t, "the rendered glance-api-paste.ini and [keystone_authtoken] validate real Keystone tokens: /healthcheck open, /v2/images 200 with a token, 401 without or with a forged one", func(t *testing.T) {
		if ks == nil {
			t.Skip("no Keystone")
		}
		// The example without its no-Keystone paste override: glance-krm's
		// own paste file and the keystone flavor, as the seed renders them,
		// pointed at the Keystone above.
		// Under the run's root, not this check's TempDir: the later checks
		// render variants of it after this one has ended.
		pdir = filepath.Join(m.root, "keystone-example")
		testenv.CopyTree(t, copyExample(t, m.s3.endpoint, m.rel, m.db.port), pdir, nil)
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
		b = bytes.Replace(b, []byte(endpoint), []byte("keystoneEndpoint: "+ks.URL+"\n  region: RegionOne\n"), 1)
		write(t, gy, string(b))
		// The drain checks retire secondary into primary (drain_test.go).
		bf := filepath.Join(pdir, "backends.yaml")
		bb, err := os.ReadFile(bf)
		if err != nil || !bytes.Contains(bb, []byte("  name: secondary\n")) {
			t.Fatalf("examples/local-s3/backends.yaml no longer names secondary: %v", err)
		}
		write(t, bf, strings.Replace(string(bb), "  name: secondary\n", "  name: secondary\n  annotations:\n    glance.openstack.c5c3.io/drain-to: primary\n", 1))
		rp = render(t, m.rel, pdir, filepath.Join(m.root, "paste"))
		startPod(t, rp, m.secrets)
		gp = startGlanceReady(t, filepath.Join(m.root, "paste"), rp, "/healthcheck")
		token := ks.User(t, "demo-"+m.rel.catalog)
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
		assertNoCredential(t, gp.tail(), m.secrets)
	})
	check(t, "[keystone_authtoken] service_type = image: a token of an application credential whose access rule allows GET /v2/images alone lists images (200) and is refused the rest (401); rendered without service_type, the same token is refused (401) with authtoken's warning", func(t *testing.T) {
		if gp == nil {
			t.Skip("no Glance behind Keystone")
		}
		m.serviceType(t, ks, gp, pdir)
	})
	check(t, "the service user authenticates with an application credential (auth_type v3applicationcredential, id and secret from a Secret, no password mounted): user tokens are validated (200), a forged one refused (401); rotated to a second credential at the next pod start, the first then deleted; no secret in a log", func(t *testing.T) {
		if gp == nil {
			t.Skip("no Glance behind Keystone")
		}
		m.applicationCredential(t, ks, pdir)
	})
	if gp != nil {
		drainChecks(t, gp, rp, ks, m.s3, m.secrets)
		assertNoCredential(t, gp.tail(), m.secrets)
		gp.stop()
	}
}

// serviceType holds the rendered [keystone_authtoken] service_type to what
// users of application credentials need (the access rules name a service
// type, which authtoken compares with it), on gp and on a Glance rendered
// from pdir without it.
func (m *multiStoreRun) serviceType(t *testing.T, ks *keystone, gp *glanceAPI, pdir string) {
	user := "demo-" + m.rel.catalog
	id, secret := ks.ApplicationCredential(t, ks.Token(t, user, user+"-pw", user), ks.ID(t, "users", user), "image-list",
		[]map[string]string{{"service": "image", "method": "GET", "path": "/v2/images"}})
	token := ks.ApplicationCredentialToken(t, id, secret)
	for path, want := range map[string]int{"/v2/images": http.StatusOK, "/v2/schemas/image": http.StatusUnauthorized} {
		if got := status(t, gp, path, token); got != want {
			t.Errorf("GET %s with the restricted credential's token: %d, want %d\n%s\nkeystone:\n%s", path, got, want, gp.tail(), ks.tail())
		}
	}
	// The same Glance rendered with service_type emptied by extraConfig
	// (an option glance-krm renders and a user may override).
	r, root := m.renderVariant(t, pdir, "no-service-type", "\n  extraConfig:\n", "\n  extraConfig:\n    keystone_authtoken:\n      service_type: \"\"\n")
	startPod(t, r, m.secrets)
	without := startGlanceReady(t, root, r, "/healthcheck")
	defer without.stop()
	if got := status(t, without, "/v2/images", token); got != http.StatusUnauthorized {
		t.Errorf("GET /v2/images with the restricted credential's token, no service_type rendered: %d, want 401\n%s", got, without.tail())
	}
	if !strings.Contains(without.tail(), "Set service_type in [keystone_authtoken]") {
		t.Errorf("without service_type, authtoken's log does not name the option:\n%s", without.tail())
	}
	for _, g := range []*glanceAPI{gp, without} {
		if strings.Contains(g.tail(), secret) {
			t.Error("the application credential's secret is in glance-api's log")
		}
	}
}

// applicationCredential renders the Glance of pdir with its service user
// authenticating by an application credential of Glance's service user,
// starts it with the credential's Secret in place of the password's, and
// rotates the credential as docs/credentials.md says: a second one in the
// Secret, the next pod start, then the first one deleted in Keystone.
func (m *multiStoreRun) applicationCredential(t *testing.T, ks *keystone, pdir string) {
	password := secretValue(t, m.secrets, "glance-service-user")["password"]
	service, serviceID := ks.Token(t, "glance", password, "service"), ks.ID(t, "users", "glance")
	firstID, firstSecret := ks.ApplicationCredential(t, service, serviceID, "glance-krm-1", nil)
	r, root := m.renderVariant(t, pdir, "application-credential", "\n  serviceUser:\n", "\n  serviceUser:\n    applicationCredential:\n      secretRef:\n        name: glance-ac\n")
	conf, err := os.ReadFile(r.apiConf)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"auth_type = v3applicationcredential", "project_name =\n"} {
		if !strings.Contains(string(conf), want) {
			t.Fatalf("the rendered glance-api.conf lacks %q:\n%s", want, conf)
		}
	}
	user := "demo-" + m.rel.catalog
	userToken := ks.Token(t, user, user+"-pw", user)
	serve := func(id, secret string) *glanceAPI {
		ac, err := yaml.Parse(fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata: {name: glance-ac}\nstringData: {AC_ID: %q, AC_SECRET: %q}\n", id, secret))
		if err != nil {
			t.Fatal(err)
		}
		// The service user's password Secret is left out: the pod must not need it.
		var secrets []*yaml.RNode
		for _, s := range m.secrets {
			if s.GetName() != "glance-service-user" {
				secrets = append(secrets, s)
			}
		}
		secrets = append(secrets, ac)
		startPod(t, r, secrets)
		g := startGlanceReady(t, root, r, "/healthcheck")
		for token, want := range map[string]int{userToken: http.StatusOK, "forged-" + userToken[:8]: http.StatusUnauthorized} {
			if got := status(t, g, "/v2/images", token); got != want {
				t.Errorf("GET /v2/images, the service user on application credential %s: %d, want %d\n%s\nkeystone:\n%s", id, got, want, g.tail(), ks.tail())
			}
		}
		for _, v := range []string{secret, password} {
			if strings.Contains(g.tail(), v) {
				t.Error("a service user's credential is in glance-api's log")
			}
		}
		return g
	}
	first := serve(firstID, firstSecret)
	first.stop()
	// Rotation: a second credential beside the first, the Secret changed,
	// the next pod start; only then is the first one deleted.
	secondID, secondSecret := ks.ApplicationCredential(t, service, serviceID, "glance-krm-2", nil)
	second := serve(secondID, secondSecret)
	defer second.stop()
	ks.Call(t, http.MethodDelete, "/users/"+serviceID+"/application_credentials/"+firstID, nil, nil, http.StatusNoContent)
	if got := status(t, second, "/v2/images", ks.Token(t, user, user+"-pw", user)); got != http.StatusOK {
		t.Errorf("GET /v2/images after the first credential was deleted: %d, want 200\n%s", got, second.tail())
	}
}

// renderVariant renders the example of pdir with the first at of its
// glance.yaml replaced by with, into m.root/name.
func (m *multiStoreRun) renderVariant(t *testing.T, pdir, name, at, with string) (rendering, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "example")
	testenv.CopyTree(t, pdir, dir, nil)
	gy := filepath.Join(dir, "glance.yaml")
	b, err := os.ReadFile(gy)
	if err != nil || !bytes.Contains(b, []byte(at)) {
		t.Fatalf("%s has no %q to change (%v)", gy, at, err)
	}
	write(t, gy, strings.Replace(string(b), at, with, 1))
	root := filepath.Join(m.root, name)
	return render(t, m.rel, dir, root), root
}

// status is the HTTP status of GET path on g with token.
func status(t *testing.T, g *glanceAPI, path, token string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, g.url+path, nil)
	req.Header.Set("X-Auth-Token", token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v\n%s", path, err, g.tail())
	}
	resp.Body.Close()
	return resp.StatusCode
}

// keystone is Debian bookworm's Keystone (the keystone root file system,
// rootfs.sh) on its own database of a test's MariaDB, bootstrapped by the
// test and served by uwsgi on loopback: tokens are Keystone's own, so
// Glance's authtoken middleware validates them for real.
type keystone struct {
	testenv.Keystone // URL: http://127.0.0.1:PORT/v3
	log              string
}

// The bootstrap admin's password: Keystone's only, never Glance's.
const keystoneAdminPassword = "keystone-admin-e2e"

// startKeystone bootstraps Keystone on db, creates the service project,
// the service role and Glance's service user with servicePassword (the
// value of the Secret the rendered [keystone_authtoken] reads), and stops
// it when owner (the test that uses it, t's parent when t is one check)
// ends.
func startKeystone(t, owner *testing.T, db *mariaDB, servicePassword string) *keystone {
	t.Helper()
	ks := release{name: "keystone", rootfs: testenv.Env(t, "GLANCE_ROOTFS_KEYSTONE", "make e2e-glance")}
	dir := owner.TempDir()
	const dbPassword = "keystone-db-e2e"
	for _, host := range []string{"127.0.0.1", "localhost"} {
		if err := db.exec(t, fmt.Sprintf("CREATE USER IF NOT EXISTS 'keystone'@%s IDENTIFIED BY %s", sqlString(host), sqlString(dbPassword))); err != nil {
			t.Fatal(err)
		}
		if err := db.exec(t, "GRANT ALL ON `keystone`.* TO 'keystone'@"+sqlString(host)); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.exec(t, "CREATE DATABASE IF NOT EXISTS `keystone`"); err != nil {
		t.Fatal(err)
	}
	port := testenv.FreePort(t)
	k := &keystone{log: filepath.Join(dir, "keystone.log")}
	k.URL, k.Log = fmt.Sprintf("http://127.0.0.1:%d/v3", port), k.tail
	conf := write(t, filepath.Join(dir, "keystone.conf"), fmt.Sprintf(`[DEFAULT]
log_file = %[1]s/keystone-manage.log
[database]
connection = mysql+pymysql://keystone:%[2]s@127.0.0.1:%[3]d/keystone
[token]
provider = fernet
[fernet_tokens]
key_repository = %[1]s/fernet-keys
[fernet_receipts]
key_repository = %[1]s/fernet-receipts
[credential]
key_repository = %[1]s/credential-keys
`, dir, dbPassword, db.port))
	manage := func(args ...string) {
		t.Helper()
		out, err := ks.run(t, "", dir, nil, "keystone-manage", append([]string{"--config-file", conf}, args...)...).CombinedOutput()
		if err != nil {
			b, _ := os.ReadFile(filepath.Join(dir, "keystone-manage.log"))
			t.Fatalf("keystone-manage %s: %v\n%s\n%s", args[0], err, out, tail(string(b), 40))
		}
	}
	manage("db_sync")
	manage("fernet_setup", "--keystone-user", "root", "--keystone-group", "root")
	manage("credential_setup", "--keystone-user", "root", "--keystone-group", "root")
	manage("bootstrap", "--bootstrap-password", keystoneAdminPassword, "--bootstrap-region-id", "RegionOne",
		"--bootstrap-public-url", k.URL, "--bootstrap-internal-url", k.URL, "--bootstrap-admin-url", k.URL)

	log, err := os.Create(k.log)
	if err != nil {
		t.Fatal(err)
	}
	cmd := ks.run(t, "", dir, []string{"OS_KEYSTONE_CONFIG_FILES=" + conf}, "uwsgi", "--plugin", "python3",
		"--http-socket", fmt.Sprintf("127.0.0.1:%d", port), "--wsgi-file", "/usr/bin/keystone-wsgi-public",
		"--master", "--processes", "1", "--threads", "4", "--die-on-term", "--enable-threads", "--add-header", "Connection: close")
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	owner.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
		}
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	})
	deadline := time.Now().Add(90 * time.Second)
	for {
		if resp, err := http.Get(k.URL); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		select {
		case <-exited:
			t.Fatalf("keystone exited: %s", k.tail())
		case <-time.After(300 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("keystone did not answer in 90 s: %s", k.tail())
		}
	}
	k.Admin = k.Token(t, "admin", keystoneAdminPassword, "admin")
	service := k.Create(t, "projects", "project", map[string]any{"name": "service", "domain_id": "default"})
	role := k.Create(t, "roles", "role", map[string]any{"name": "service"})
	user := k.Create(t, "users", "user", map[string]any{"name": "glance", "domain_id": "default", "password": servicePassword})
	k.Call(t, http.MethodPut, "/projects/"+service+"/users/"+user+"/roles/"+role, nil, nil, http.StatusNoContent)
	// The image service in the catalog: authtoken finds the
	// [keystone_authtoken] service_type there before it reads an
	// application credential's access rules.
	k.Create(t, "services", "service", map[string]any{"type": "image", "name": "glance"})
	return k
}

func (k *keystone) tail() string {
	b, _ := os.ReadFile(k.log)
	return tail(string(b), 30)
}

func tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
