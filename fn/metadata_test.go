package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/c5c3/glance-krm/internal/testenv"
)

// repoURL is where metadata.yaml's URLs point: this repository's main.
const repoURL = "https://github.com/c5c3/glance-krm/tree/main/"

// TestMetadataFollowsTheCatalog holds metadata.yaml to the kpt functions
// catalog's own schema (testdata/metadata-schema.json, its source in
// testdata/SOURCE.md), and its URLs to folders of this repository: the
// source to fn/, each example package to a folder with a Kptfile.
func TestMetadataFollowsTheCatalog(t *testing.T) {
	raw, err := os.ReadFile("metadata.yaml")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := yaml.YAMLToJSON(raw)
	if err != nil {
		t.Fatal(err)
	}
	if err := metadataProblem(t, doc); err != nil {
		t.Errorf("metadata.yaml does not follow the catalog's schema: %v", err)
	}
	var meta struct {
		Image              string
		SourceURL          string   `json:"sourceURL"`
		ExamplePackageURLs []string `json:"examplePackageURLs"`
	}
	if err := json.Unmarshal(doc, &meta); err != nil {
		t.Fatal(err)
	}
	if meta.SourceURL != repoURL+"fn" {
		t.Errorf("sourceURL %q, want %q", meta.SourceURL, repoURL+"fn")
	}
	if len(meta.ExamplePackageURLs) == 0 {
		t.Error("no examplePackageURLs: the catalog lists a function with its examples")
	}
	for _, u := range meta.ExamplePackageURLs {
		dir, ok := strings.CutPrefix(u, repoURL)
		if !ok {
			t.Errorf("example package %q is not a folder of %s", u, repoURL)
			continue
		}
		if _, err := os.Stat(filepath.Join("..", dir, "Kptfile")); err != nil {
			t.Errorf("example package %q: %v (a kpt package has a Kptfile)", u, err)
		}
	}
}

// The schema refuses what the catalog refuses: a field it does not know,
// a tag outside its list, an image outside ghcr.io.
func TestMetadataSchemaRefuses(t *testing.T) {
	for name, doc := range map[string]string{
		"an unknown field": `{"image": "ghcr.io/c5c3/glance-krm-fn", "description": "d", "tags": ["mutator"], "emails": ["a@b.c"]}`,
		"an unknown tag":   `{"image": "ghcr.io/c5c3/glance-krm-fn", "description": "d", "tags": ["openstack"]}`,
		"another registry": `{"image": "quay.io/c5c3/glance-krm-fn", "description": "d", "tags": ["mutator"]}`,
		"no tags":          `{"image": "ghcr.io/c5c3/glance-krm-fn", "description": "d", "tags": []}`,
	} {
		if metadataProblem(t, []byte(doc)) == nil {
			t.Errorf("%s: the schema accepted %s", name, doc)
		}
	}
}

// metadataProblem is why doc does not validate against the catalog's
// schema, or nil.
func metadataProblem(t *testing.T, doc []byte) error {
	t.Helper()
	return testenv.SchemaProblem(t, filepath.Join("testdata", "metadata-schema.json"), doc)
}
