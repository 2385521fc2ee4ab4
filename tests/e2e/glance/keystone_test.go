//go:build e2e

package glance_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/c5c3/glance-krm/internal/testenv"
)

// keystone is Debian bookworm's Keystone (the keystone root file system,
// rootfs.sh) on its own database of a test's MariaDB, bootstrapped by the
// test and served by uwsgi on loopback: tokens are Keystone's own, so
// Glance's authtoken middleware validates them for real.
type keystone struct {
	url   string // the Identity v3 endpoint, http://127.0.0.1:PORT/v3
	admin string // a token of the bootstrap admin, project admin
	log   string
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
	k := &keystone{url: fmt.Sprintf("http://127.0.0.1:%d/v3", port), log: filepath.Join(dir, "keystone.log")}
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
		"--bootstrap-public-url", k.url, "--bootstrap-internal-url", k.url, "--bootstrap-admin-url", k.url)

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
		if resp, err := http.Get(k.url); err == nil {
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
	k.admin = k.token(t, "admin", keystoneAdminPassword, "admin")
	service := k.create(t, "projects", "project", map[string]any{"name": "service", "domain_id": "default"})
	role := k.create(t, "roles", "role", map[string]any{"name": "service"})
	user := k.create(t, "users", "user", map[string]any{"name": "glance", "domain_id": "default", "password": servicePassword})
	k.call(t, http.MethodPut, "/projects/"+service+"/users/"+user+"/roles/"+role, nil, http.StatusNoContent)
	return k
}

// user creates a user with the member role in a project of its own and
// returns a project-scoped token of it.
func (k *keystone) user(t *testing.T, name string) string {
	t.Helper()
	project := k.create(t, "projects", "project", map[string]any{"name": name, "domain_id": "default"})
	user := k.create(t, "users", "user", map[string]any{"name": name, "domain_id": "default", "password": name + "-pw"})
	var roles struct {
		Roles []struct{ ID string } `json:"roles"`
	}
	k.call(t, http.MethodGet, "/roles?name=member", &roles, http.StatusOK)
	if len(roles.Roles) != 1 {
		t.Fatalf("keystone has %d roles named member", len(roles.Roles))
	}
	k.call(t, http.MethodPut, "/projects/"+project+"/users/"+user+"/roles/"+roles.Roles[0].ID, nil, http.StatusNoContent)
	return k.token(t, name, name+"-pw", name)
}

// grant gives a user of the default domain a role in a project, by name.
func (k *keystone) grant(t *testing.T, user, project, role string) {
	t.Helper()
	id := func(collection, name string) string {
		var out map[string]json.RawMessage // the collection, and its links
		k.call(t, http.MethodGet, "/"+collection+"?name="+name, &out, http.StatusOK)
		var items []struct{ ID string }
		if err := json.Unmarshal(out[collection], &items); err != nil || len(items) != 1 {
			t.Fatalf("keystone has %d %s named %s (%v)", len(items), collection, name, err)
		}
		return items[0].ID
	}
	k.call(t, http.MethodPut, "/projects/"+id("projects", project)+"/users/"+id("users", user)+"/roles/"+id("roles", role), nil, http.StatusNoContent)
}

// token authenticates a user of the default domain by password, scoped
// to a project of that domain.
func (k *keystone) token(t *testing.T, user, password, project string) string {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"auth": map[string]any{
		"identity": map[string]any{"methods": []string{"password"}, "password": map[string]any{
			"user": map[string]any{"name": user, "domain": map[string]any{"id": "default"}, "password": password}}},
		"scope": map[string]any{"project": map[string]any{"name": project, "domain": map[string]any{"id": "default"}}},
	}})
	resp, err := http.Post(k.url+"/auth/tokens", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusCreated || resp.Header.Get("X-Subject-Token") == "" {
		t.Fatalf("keystone token for %s: %d %s\n%s", user, resp.StatusCode, b, k.tail())
	}
	return resp.Header.Get("X-Subject-Token")
}

// create POSTs one object of the Identity API as the admin; its id.
func (k *keystone) create(t *testing.T, collection, kind string, fields map[string]any) string {
	t.Helper()
	var out map[string]struct{ ID string }
	k.callBody(t, http.MethodPost, "/"+collection, map[string]any{kind: fields}, &out, http.StatusCreated)
	return out[kind].ID
}

func (k *keystone) call(t *testing.T, method, path string, out any, want int) {
	t.Helper()
	k.callBody(t, method, path, nil, out, want)
}

func (k *keystone) callBody(t *testing.T, method, path string, in, out any, want int) {
	t.Helper()
	var body io.Reader
	if in != nil {
		b, _ := json.Marshal(in)
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, k.url+path, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Auth-Token", k.admin)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		t.Fatalf("keystone %s %s: %d, want %d: %s", method, path, resp.StatusCode, want, b)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("keystone %s %s: %v: %s", method, path, err, b)
		}
	}
}

func (k *keystone) tail() string {
	b, _ := os.ReadFile(k.log)
	return tail(string(b), 30)
}

func tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
