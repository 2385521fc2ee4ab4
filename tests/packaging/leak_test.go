//go:build e2e

package packaging_test

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/c5c3/glance-krm/internal/testenv"
)

const (
	leakAccess = "AKIA-LEAK-MARKER-c0ffee"
	leakSecret = "SECRET-LEAK-MARKER-f00d42"
)

var leakMarkers = []string{leakAccess, leakSecret,
	base64.StdEncoding.EncodeToString([]byte(leakAccess)), base64.StdEncoding.EncodeToString([]byte(leakSecret))}

// credentials are the example's Secrets, holding the markers, once as
// stringData and once as data.
var credentials = `apiVersion: v1
kind: Secret
metadata:
  name: garage-s3-credentials
  namespace: openstack
stringData:
  access-key-id: ` + leakAccess + `
  secret-access-key: ` + leakSecret + `
---
apiVersion: v1
kind: Secret
metadata:
  name: glance-service-user
  namespace: openstack
data:
  password: ` + base64.StdEncoding.EncodeToString([]byte(leakSecret)) + `
`

// withoutInputSecrets drops the documents that are the input Secrets
// themselves: a transformer passes the user's own objects through, and
// those are the one place the values are meant to be.
func withoutInputSecrets(out string) string {
	var keep []string
	for _, doc := range strings.Split(out, "\n---\n") {
		if strings.Contains(doc, "name: garage-s3-credentials\n") || strings.Contains(doc, "name: glance-service-user\n") {
			if strings.Contains(doc, "kind: Secret") && !strings.Contains(doc, "managed-by: glance-krm") {
				continue
			}
		}
		keep = append(keep, doc)
	}
	return strings.Join(keep, "\n---\n")
}

func assertNoMarkers(t *testing.T, where, text string) {
	t.Helper()
	if len(text) == 0 {
		t.Errorf("%s: nothing to search", where)
	}
	for _, m := range leakMarkers {
		if n := strings.Count(text, m); n > 0 {
			t.Errorf("%s: credential marker %q appears %d times", where, m, n)
		}
	}
}

// TestNoSecretLeaksThroughTheDoors puts credentials Secrets with marker
// values into the build itself (the worst case: the Secret is in git) and
// searches what kustomize, the Argo CD plugin and kpt produce, results
// and stderr included, outside the Secrets themselves: zero hits.
func TestNoSecretLeaksThroughTheDoors(t *testing.T) {
	addCredentials := func(dir string) {
		if err := os.WriteFile(filepath.Join(dir, "credentials.yaml"), []byte(credentials), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("kustomize", func(t *testing.T) {
		dir := t.TempDir()
		testenv.CopyTree(t, filepath.Join(root, "examples/standalone"), filepath.Join(dir, "top"), func(path string, b []byte) []byte {
			return []byte(strings.ReplaceAll(string(b), "../../bin/glance-krm-fn", mustEnv(t, "GLANCE_KRM_FN")))
		})
		addCredentials(filepath.Join(dir, "top", "resources"))
		kfile := filepath.Join(dir, "top", "resources", "kustomization.yaml")
		b, _ := os.ReadFile(kfile)
		if err := os.WriteFile(kfile, []byte(strings.Replace(string(b), "  - deployment.yaml\n", "  - deployment.yaml\n  - credentials.yaml\n", 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		out, stderr, err := run(t, os.Environ(), "", mustEnv(t, "KUSTOMIZE_BIN"), "build", "--enable-alpha-plugins", "--enable-exec", filepath.Join(dir, "top"))
		if err != nil {
			t.Fatalf("%v\n%s", err, stderr)
		}
		if strings.Count(out, leakAccess) == 0 {
			t.Fatal("the input Secret did not reach the output: the search below would prove nothing")
		}
		assertNoMarkers(t, "kustomize output", withoutInputSecrets(out)+stderr)
	})

	t.Run("kpt", func(t *testing.T) {
		pkg := kptPackage(t, mustEnv(t, "GLANCE_KRM_FN"))
		addCredentials(pkg)
		results := t.TempDir()
		out, err := kptRender(t, os.Environ(), pkg, "--allow-exec", "--results-dir", results)
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		var text strings.Builder
		text.WriteString(out)
		for path, content := range snapshot(t, pkg) {
			if path != "credentials.yaml" {
				text.WriteString(content)
			}
		}
		for _, content := range snapshot(t, results) {
			text.WriteString(content)
		}
		assertNoMarkers(t, "kpt package, results and output", text.String())
	})

	t.Run("function error results", func(t *testing.T) {
		// Markers in places a careless message would quote: a denylisted
		// extraOptions value and a value with a newline.
		in := "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n" +
			"- apiVersion: glance.openstack.c5c3.io/v1alpha1\n  kind: GlanceBackend\n  metadata: {name: primary, namespace: openstack}\n" +
			"  spec:\n    glanceRef: {name: glance}\n    type: S3\n    isDefault: true\n" +
			"    s3: {host: 'http://s3', bucket: b, credentialsSecretRef: {name: c}}\n" +
			"    extraOptions: {s3_store_access_key: " + leakAccess + ", s3_store_thread_pools: \"" + leakSecret + "\\n\"}\n"
		cmdOut, cmdErr, runErr := runWithStdin(t, in, mustEnv(t, "GLANCE_KRM_FN"))
		if runErr == nil {
			t.Fatal("the function accepted a denylisted credential option")
		}
		results := cmdOut[strings.Index(cmdOut, "results:"):]
		assertNoMarkers(t, "results and stderr", results+cmdErr)
	})
}
