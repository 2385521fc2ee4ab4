//go:build e2e

package node_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/c5c3/glance-krm/internal/testenv"
	"github.com/c5c3/glance-krm/internal/testenv/node"
)

// Keystone on the node: Debian bookworm's (the keystone root file system
// of tests/e2e/glance/rootfs.sh, as the chroot matrix runs it), on its own
// database of the infrastructure's MariaDB, bootstrapped by its init
// container and served by uWSGI behind the Service keystone.glance-infra,
// the endpoint examples/node names. Tokens are Keystone's own, so the
// rendered [keystone_authtoken] validates them for real.
const (
	keystoneURL           = "http://keystone." + infraNamespace + ".svc:5000/v3"
	keystoneDBPassword    = "keystone-db-node"    // Keystone's alone, never Glance's
	keystoneAdminPassword = "keystone-admin-node" // the bootstrap admin's
)

// keystoneSQL creates Keystone's database and user (MariaDB's init file).
func keystoneSQL() string {
	return "CREATE DATABASE IF NOT EXISTS `keystone`;\nCREATE USER IF NOT EXISTS 'keystone'@'%' IDENTIFIED BY '" +
		sqlString(keystoneDBPassword) + "';\nGRANT ALL ON `keystone`.* TO 'keystone'@'%';\n"
}

// keystoneImage is the image of the keystone root file system.
func keystoneImage(t *testing.T) (ref, archive string) {
	t.Helper()
	fs := testenv.Env(t, "GLANCE_ROOTFS_KEYSTONE", "make e2e-node")
	key, err := fileKey(fs)
	if err != nil {
		t.Fatal(err)
	}
	ref = "localhost/glance-krm-node/keystone:" + key
	archive = node.ArchiveName(node.Cache(), "keystone", key)
	if err := node.BuildArchive(archive, node.Image{Ref: ref, Dir: fs}); err != nil {
		t.Fatal(err)
	}
	return ref, archive
}

// installKeystone runs Keystone and makes, through its API, what Glance's
// service user needs: the service project, the service role, and the user
// glance with password, given the admin role in the service project too
// (the store drain copies images and deletes locations as it; every
// OpenStack install guide gives it that role).
func installKeystone(t *testing.T, n *node.Node, image, password string) *keystoneClient {
	t.Helper()
	manifests := strings.NewReplacer("KEYSTONE_IMAGE", image, "KEYSTONE_URL", keystoneURL,
		"KEYSTONE_DB_PASSWORD", keystoneDBPassword).Replace(keystoneManifests)
	if _, err := n.Kubectl(nil, "-n", infraNamespace, "create", "secret", "generic", "keystone-admin",
		"--from-literal=password="+keystoneAdminPassword); err != nil {
		t.Fatal(err)
	}
	if err := n.Apply(manifests); err != nil {
		t.Fatal(err)
	}
	if err := n.WaitAvailable(infraNamespace, "keystone", 5*time.Minute); err != nil {
		t.Fatal(err)
	}
	k := &keystoneClient{http: n.HTTPClient(30 * time.Second)}
	k.admin = k.token(t, "admin", keystoneAdminPassword, "admin")
	service := k.create(t, "projects", "project", map[string]any{"name": "service", "domain_id": "default"})
	user := k.create(t, "users", "user", map[string]any{"name": "glance", "domain_id": "default", "password": password})
	for _, role := range []string{k.create(t, "roles", "role", map[string]any{"name": "service"}), k.roleID(t, "admin")} {
		k.call(t, http.MethodPut, "/projects/"+service+"/users/"+user+"/roles/"+role, nil, nil, http.StatusNoContent)
	}
	return k
}

// keystoneClient is the Identity API as the bootstrap admin, from inside
// the node.
type keystoneClient struct {
	http  *http.Client
	admin string
}

// user creates a user with the member role in a project of its own and
// returns a token of it, scoped to that project.
func (k *keystoneClient) user(t *testing.T, name string) string {
	t.Helper()
	project := k.create(t, "projects", "project", map[string]any{"name": name, "domain_id": "default"})
	user := k.create(t, "users", "user", map[string]any{"name": name, "domain_id": "default", "password": name + "-pw"})
	k.call(t, http.MethodPut, "/projects/"+project+"/users/"+user+"/roles/"+k.roleID(t, "member"), nil, nil, http.StatusNoContent)
	return k.token(t, name, name+"-pw", name)
}

func (k *keystoneClient) roleID(t *testing.T, name string) string {
	t.Helper()
	var roles struct {
		Roles []struct{ ID string } `json:"roles"`
	}
	k.call(t, http.MethodGet, "/roles?name="+name, nil, &roles, http.StatusOK)
	if len(roles.Roles) != 1 {
		t.Fatalf("keystone has %d roles named %s", len(roles.Roles), name)
	}
	return roles.Roles[0].ID
}

// token authenticates a user of the default domain by password, scoped to
// a project of that domain.
func (k *keystoneClient) token(t *testing.T, user, password, project string) string {
	t.Helper()
	body := map[string]any{"auth": map[string]any{
		"identity": map[string]any{"methods": []string{"password"}, "password": map[string]any{
			"user": map[string]any{"name": user, "domain": map[string]any{"id": "default"}, "password": password}}},
		"scope": map[string]any{"project": map[string]any{"name": project, "domain": map[string]any{"id": "default"}}},
	}}
	resp := k.send(t, http.MethodPost, "/auth/tokens", body, "", http.StatusCreated)
	token := resp.header.Get("X-Subject-Token")
	if token == "" {
		t.Fatalf("keystone gave %s no token", user)
	}
	return token
}

// create POSTs one object of the Identity API as the admin; its id.
func (k *keystoneClient) create(t *testing.T, collection, kind string, fields map[string]any) string {
	t.Helper()
	var out map[string]struct{ ID string }
	k.call(t, http.MethodPost, "/"+collection, map[string]any{kind: fields}, &out, http.StatusCreated)
	return out[kind].ID
}

func (k *keystoneClient) call(t *testing.T, method, path string, in, out any, want int) {
	t.Helper()
	resp := k.send(t, method, path, in, k.admin, want)
	if out != nil {
		if err := json.Unmarshal(resp.body, out); err != nil {
			t.Fatalf("keystone %s %s: %v: %s", method, path, err, resp.body)
		}
	}
}

type keystoneAnswer struct {
	status int
	header http.Header
	body   []byte
}

// send retries what did not reach Keystone or what it could not answer (a
// connection refused or cut, a 5xx, while a two-core node starts five
// Glances); any other answer than want fails the test.
func (k *keystoneClient) send(t *testing.T, method, path string, in any, token string, want int) keystoneAnswer {
	t.Helper()
	var payload []byte
	if in != nil {
		payload, _ = json.Marshal(in)
	}
	var last error
	for range 5 {
		ans, err := k.once(method, path, payload, token)
		switch {
		case err != nil:
			last = err
		case ans.status >= 500:
			last = fmt.Errorf("HTTP %d: %s", ans.status, ans.body)
		case ans.status != want:
			t.Fatalf("keystone %s %s: HTTP %d, want %d: %s", method, path, ans.status, want, ans.body)
		default:
			return ans
		}
		time.Sleep(2 * time.Second)
	}
	t.Fatalf("keystone %s %s: %v", method, path, last)
	return keystoneAnswer{}
}

func (k *keystoneClient) once(method, path string, payload []byte, token string) (keystoneAnswer, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, keystoneURL+path, bytes.NewReader(payload))
	if err != nil {
		return keystoneAnswer{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("X-Auth-Token", token)
	}
	resp, err := k.http.Do(req)
	if err != nil {
		return keystoneAnswer{}, err
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return keystoneAnswer{}, err
	}
	return keystoneAnswer{resp.StatusCode, resp.Header, b}, nil
}

const keystoneManifests = `apiVersion: v1
kind: ConfigMap
metadata: {name: keystone, namespace: glance-infra}
data:
  keystone.conf: |
    [database]
    connection = mysql+pymysql://keystone:KEYSTONE_DB_PASSWORD@mariadb.glance-infra.svc:3306/keystone
    [token]
    provider = fernet
    [fernet_tokens]
    key_repository = /keys/fernet
    [fernet_receipts]
    key_repository = /keys/receipts
    [credential]
    key_repository = /keys/credential
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: keystone, namespace: glance-infra}
spec:
  selector: {matchLabels: {app: keystone}}
  template:
    metadata: {labels: {app: keystone}}
    spec:
      initContainers:
      - name: bootstrap
        image: KEYSTONE_IMAGE
        imagePullPolicy: Never
        command:
        - /bin/sh
        - -ec
        - |
          manage() { keystone-manage --config-file /etc/keystone-node/keystone.conf "$@"; }
          manage db_sync
          manage fernet_setup --keystone-user root --keystone-group root
          manage credential_setup --keystone-user root --keystone-group root
          manage bootstrap --bootstrap-password "$ADMIN_PASSWORD" --bootstrap-region-id RegionOne \
            --bootstrap-public-url KEYSTONE_URL --bootstrap-internal-url KEYSTONE_URL --bootstrap-admin-url KEYSTONE_URL
        env:
        - name: ADMIN_PASSWORD
          valueFrom: {secretKeyRef: {name: keystone-admin, key: password}}
        volumeMounts:
        - {name: conf, mountPath: /etc/keystone-node}
        - {name: keys, mountPath: /keys}
      containers:
      - name: keystone
        image: KEYSTONE_IMAGE
        imagePullPolicy: Never
        command: [uwsgi, --plugin, python3, --http-socket, "0.0.0.0:5000", --wsgi-file, /usr/bin/keystone-wsgi-public,
          --master, --processes, "2", --threads, "4", --die-on-term, --enable-threads, --add-header, "Connection: close"]
        env:
        - {name: OS_KEYSTONE_CONFIG_FILES, value: /etc/keystone-node/keystone.conf}
        ports: [{containerPort: 5000}]
        readinessProbe:
          httpGet: {path: /v3, port: 5000}
          periodSeconds: 2
          timeoutSeconds: 10
        volumeMounts:
        - {name: conf, mountPath: /etc/keystone-node}
        - {name: keys, mountPath: /keys}
      volumes:
      - {name: conf, configMap: {name: keystone}}
      - {name: keys, emptyDir: {}}
---
apiVersion: v1
kind: Service
metadata: {name: keystone, namespace: glance-infra}
spec:
  selector: {app: keystone}
  ports: [{port: 5000}]
`
