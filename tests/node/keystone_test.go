//go:build e2e

package node_test

import (
	_ "embed"
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
func installKeystone(t *testing.T, n *node.Node, image, password string) *testenv.Keystone {
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
	k := &testenv.Keystone{URL: keystoneURL, HTTP: n.HTTPClient(30 * time.Second)}
	k.Admin = k.Token(t, "admin", keystoneAdminPassword, "admin")
	service := k.Create(t, "projects", "project", map[string]any{"name": "service", "domain_id": "default"})
	user := k.Create(t, "users", "user", map[string]any{"name": "glance", "domain_id": "default", "password": password})
	for _, role := range []string{k.Create(t, "roles", "role", map[string]any{"name": "service"}), k.ID(t, "roles", "admin")} {
		k.Call(t, http.MethodPut, "/projects/"+service+"/users/"+user+"/roles/"+role, nil, nil, http.StatusNoContent)
	}
	return k
}

// keystoneManifests is Keystone on the node: bootstrapped by its init
// container, served by uwsgi behind a Service (placeholders replaced).
//
//go:embed testdata/keystone/keystone.yaml
var keystoneManifests string
