package explain_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// drainRecord is a store drain's record as `kubectl get configmap -o
// yaml` prints it (the drain Job writes it; tests/e2e proves what it
// writes on real Glance).
func drainRecord(t *testing.T, glance, from, to, state, remaining, job string) string {
	t.Helper()
	return write(t, fmt.Sprintf(`apiVersion: v1
kind: ConfigMap
metadata:
  name: %[1]s-store-drain-%[2]s
  namespace: openstack
  resourceVersion: "4711"
  labels:
    app.kubernetes.io/managed-by: glance-krm
    glance.openstack.c5c3.io/component: drain-record
    glance.openstack.c5c3.io/glance: %[1]s
data:
  from: %[2]s
  to: %[3]s
  state: %[4]s
  remaining: "%[5]s"
  job: %[6]s
  record.json: '{}'
`, glance, from, to, state, remaining, job))
}

// drainJob is the name of the drain Job of a store in a render.
func drainJob(t *testing.T, render, store string) string {
	t.Helper()
	b, err := os.ReadFile(render)
	if err != nil {
		t.Fatal(err)
	}
	nodes, err := (&kio.ByteReader{Reader: strings.NewReader(string(b))}).Read()
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		if n.GetKind() != "Job" || n.GetLabels()["app.kubernetes.io/component"] != "store-drain" {
			continue
		}
		cmd, _ := n.Pipe(yaml.Lookup("spec", "template", "spec", "containers", "[name=store-drain]", "command"))
		if args, _ := cmd.Elements(); len(args) == 4 && yaml.GetValue(args[2]) == store {
			return n.GetName()
		}
	}
	t.Fatalf("no drain Job of store %s in %s", store, render)
	return ""
}

func write(t *testing.T, content string) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "record.yaml")
	if err := os.WriteFile(f, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

// TestStoreRemovalAfterDrain: the commit sequence of retiring a store.
// The first commit annotates it (drain-to) and generates its drain;
// nothing blocks. The second removes it: that blocks until a record of
// the drain, Complete with no image left and into the store the first
// commit named (which stays), is passed with --drain-record.
func TestStoreRemovalAfterDrain(t *testing.T) {
	dir := example(t)
	before := render(t, filepath.Join(dir, "standalone"))
	backends := filepath.Join(dir, "standalone/resources/backends.yaml")
	edit(t, backends, "  name: secondary\n  namespace: openstack\n", "  name: secondary\n  namespace: openstack\n  annotations:\n    glance.openstack.c5c3.io/drain-to: primary\n")
	draining := render(t, filepath.Join(dir, "standalone"))
	out, code := runExplain(t, before, draining)
	if code != 0 || !strings.Contains(out, "store secondary drains into primary") || !strings.Contains(out, "added: ") ||
		!strings.Contains(out, "Job/glance-store-drain-secondary-") {
		t.Errorf("the drain commit: exit %d, want 0, the drain and its Job listed:\n%s", code, out)
	}

	job := drainJob(t, draining, "secondary")
	removed := render(t, scenarios["store-removed"](t, dir))
	for name, tc := range map[string]struct {
		record []string // glance, from, to, state, remaining, job
		exit   int
		says   string
	}{
		"no record":                 {exit: 1, says: "pass `kubectl get configmap glance-store-drain-secondary -o yaml` to --drain-record"},
		"a running drain":           {record: []string{"glance", "secondary", "primary", "Running", "3", job}, exit: 1, says: "says Running, into \"primary\", 3 images left in it; the change waits"},
		"a failed drain":            {record: []string{"glance", "secondary", "primary", "Failed", "1", job}, exit: 1, says: "says Failed"},
		"complete, into another":    {record: []string{"glance", "secondary", "tertiary", "Complete", "0", job}, exit: 1, says: "is not complete"},
		"another Glance's record":   {record: []string{"other", "secondary", "primary", "Complete", "0", job}, exit: 1, says: "its record was not given"},
		"complete with images left": {record: []string{"glance", "secondary", "primary", "Complete", "2", job}, exit: 1, says: "2 images left"},
		"an older drain's record":   {record: []string{"glance", "secondary", "primary", "Complete", "0", "glance-store-drain-secondary-00000000"}, exit: 1, says: "an older drain of a store of the same name proves nothing"},
		"a record naming no Job":    {record: []string{"glance", "secondary", "primary", "Complete", "0", ""}, exit: 1, says: "is not the record of the drain the before render holds"},
		"complete, nothing left":    {record: []string{"glance", "secondary", "primary", "Complete", "0", job}, exit: 0, says: "which its record (ConfigMap glance-store-drain-secondary, written by Job " + job + ") says is complete"},
	} {
		t.Run(name, func(t *testing.T) {
			args := []string{draining, removed}
			if tc.record != nil {
				r := tc.record
				args = append([]string{"--drain-record", drainRecord(t, r[0], r[1], r[2], r[3], r[4], r[5])}, args...)
			}
			out, code := runExplain(t, args...)
			if code != tc.exit || !strings.Contains(out, tc.says) {
				t.Errorf("exit %d, want %d, saying %q:\n%s", code, tc.exit, tc.says, out)
			}
		})
	}
	complete := drainRecord(t, "glance", "secondary", "primary", "Complete", "0", job)
	// Without the drain commit before it, a record does not clear the removal.
	out, code = runExplain(t, "--drain-record", complete, before, removed)
	if code != 1 || !strings.Contains(out, "annotate its GlanceBackend glance.openstack.c5c3.io/drain-to: <store>") {
		t.Errorf("a removal without the drain commit: exit %d, want 1, naming the way through:\n%s", code, out)
	}
	// The target moved in the removal's commit: its images would be stranded there.
	edit(t, filepath.Join(dir, "standalone/resources/backends.yaml"), "bucket: glance-images\n", "bucket: glance-images-moved\n")
	moved := render(t, filepath.Join(dir, "standalone"))
	if out, code := runExplain(t, "--drain-record", complete, draining, moved); code != 1 || !strings.Contains(out, `its target "primary" moves from bucket glance-images to glance-images-moved in the same commit`) {
		t.Errorf("a removal whose target moves in the same commit: exit %d, want 1:\n%s", code, out)
	}
	// A file that is no record is refused.
	if out, code := runExplain(t, "--drain-record", before, draining, removed); code != 2 || !strings.Contains(out, "is no drain record") {
		t.Errorf("a render passed as a record: exit %d, want 2:\n%s", code, out)
	}
	// What `kubectl get configmap -l … -o yaml` prints: a List, here of
	// the record and another drain's.
	list := write(t, "apiVersion: v1\nkind: List\nitems:\n"+indent(read(t, complete))+indent(read(t, drainRecord(t, "glance", "tertiary", "primary", "Failed", "1", "x"))))
	if out, code := runExplain(t, "--drain-record", list, draining, removed); code != 0 {
		t.Errorf("the record in a List: exit %d, want 0:\n%s", code, out)
	}
}

func read(t *testing.T, file string) string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// indent makes one object an item of a List.
func indent(obj string) string {
	lines := strings.Split(strings.TrimRight(obj, "\n"), "\n")
	for i := range lines {
		if i == 0 {
			lines[i] = "- " + lines[i]
		} else {
			lines[i] = "  " + lines[i]
		}
	}
	return strings.Join(lines, "\n") + "\n"
}
