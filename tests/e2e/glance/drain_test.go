//go:build e2e

package glance_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// drainer runs the drain the function renders (the script of the
// rendered drain ConfigMap, with the rendered Job's arguments and
// environment) the way its Job does: python3 in glance-api's view of the
// rendered files, as the service user of [keystone_authtoken], against a
// running Glance. Its record goes to a file (the Job writes the same data
// into its ConfigMap through the API server, which the node proves).
type drainer struct {
	r        rendering
	script   string // the rendered drain.py, written where the root file system sees it
	from, to string // the rendered Job's arguments
	env      []string
	url      string
	record   string
}

// execCmd is a command in its own process group: the drain runs under
// unshare and chroot, and killing it means killing all of them.
type execCmd struct{ *exec.Cmd }

func (c execCmd) killGroup() {
	_ = syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
	_ = c.Wait()
}

func (d drainer) command(t *testing.T) execCmd {
	t.Helper()
	env := append(slices.Clone(d.env), "GLANCE_URL="+d.url, "GLANCE_KRM_DRAIN_RECORD_FILE="+d.record, "GLANCE_KRM_DRAIN_COPY_TIMEOUT=120")
	cmd := d.r.inPod(t, d.r.root, env, "/usr/bin/python3", d.script, d.from, d.to)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return execCmd{cmd}
}

// drainRecord is the record's data, as the Job's ConfigMap holds it.
type drainRecord struct {
	From, To, State, Remaining string
	Record                     struct {
		Moved  []string          `json:"moved"`
		Failed map[string]string `json:"failed"`
	}
}

// read reads the record; out is the run's output, for the failure.
func (d drainer) read(t *testing.T, out []byte) drainRecord {
	t.Helper()
	b, err := os.ReadFile(d.record)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var data map[string]string
	if err := json.Unmarshal(b, &data); err != nil {
		t.Fatal(err)
	}
	rec := drainRecord{From: data["from"], To: data["to"], State: data["state"], Remaining: data["remaining"]}
	if err := json.Unmarshal([]byte(data["record.json"]), &rec.Record); err != nil {
		t.Fatal(err)
	}
	return rec
}

// drainChecks: images of two projects spread over both stores; drain
// secondary into primary with the target's bucket gone (the drain fails,
// every location is kept, every image still reads), then killed after
// its first image (a second run resumes and completes), then every image
// downloads byte-identical from primary alone and secondary's bucket is
// empty. g is a Glance behind the rendered [keystone_authtoken].
func drainChecks(t *testing.T, g *glanceAPI, rp rendering, ks *keystone, s3 *s3Server, secrets []*yaml.RNode) {
	var d drainer
	dir := t.TempDir() // the release's: the script and the record outlive each check
	if !check(t, "drain: the render holds the drain of secondary into primary (its script's ConfigMap and its Job)", func(t *testing.T) {
		if rp.drainScript == "" || rp.drainJob == nil {
			t.Fatal("no drain script or Job in the render")
		}
		c := lookup(t, rp.drainJob, "spec", "template", "spec", "containers", "[name=store-drain]")
		argv := stringsOf(t, c, "command")
		if len(argv) != 4 || argv[0] != "python3" || argv[2] != "secondary" || argv[3] != "primary" {
			t.Fatalf("the drain Job runs %v", argv)
		}
		d = drainer{r: rp, from: argv[2], to: argv[3], url: g.url, record: filepath.Join(dir, "record.json"),
			script: write(t, filepath.Join(dir, "drain.py"), rp.drainScript)}
		for _, e := range containerEnv(t, c) {
			if !strings.HasPrefix(e, "GLANCE_URL=") && !strings.HasPrefix(e, "GLANCE_KRM_DRAIN_RECORD=") {
				d.env = append(d.env, e)
			}
		}
	}) {
		return
	}
	images := map[string][]byte{}
	byStore := map[string][]string{}
	check(t, "drain: images of two projects, four in secondary and two in primary, uploaded with Keystone tokens", func(t *testing.T) {
		// Glance's default policy lets an admin copy images and delete a
		// location; deployments give the service user admin in the
		// service project (docs/day2.md says so).
		ks.grant(t, "glance", "service", "admin")
		for i, user := range []string{"drain-a", "drain-b"} {
			token := ks.user(t, user+"-"+rp.rel.catalog)
			for j, store := range []string{"secondary", "secondary", "primary"} {
				data := randomBytes(t, 50_000+1_000*(3*i+j))
				id := authedUpload(t, g, token, data, store)
				images[id] = data
				byStore[store] = append(byStore[store], id)
			}
		}
	})
	if len(images) != 6 {
		return
	}
	check(t, "drain: the target's bucket gone, every copy fails, the Job fails, no location is removed", func(t *testing.T) {
		gone := s3.dir + "/glance-images"
		if err := os.Rename(gone, gone+".away"); err != nil {
			t.Fatal(err)
		}
		out, err := d.command(t).CombinedOutput()
		if renameErr := os.Rename(gone+".away", gone); renameErr != nil {
			t.Fatal(renameErr)
		}
		if err == nil {
			t.Fatalf("the drain succeeded with its target's bucket gone:\n%s", out)
		}
		rec := d.read(t, out)
		if rec.State != "Failed" || len(rec.Record.Moved) != 0 || len(rec.Record.Failed) != 4 || rec.Remaining != "4" {
			t.Errorf("record %+v, want Failed, 4 failed, 4 remaining\n%s", rec, out)
		}
		for _, id := range byStore["secondary"] {
			if !s3.has(t, "glance-images-2", id) {
				t.Errorf("image %s lost its data in secondary", id)
			}
		}
		assertNoCredential(t, string(out)+fmt.Sprint(rec), secrets)
	})
	check(t, "drain: killed after its first image, a second run resumes and completes", func(t *testing.T) {
		cmd := d.command(t)
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stderr = cmd.Stdout
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		var first bytes.Buffer
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			first.WriteString(sc.Text() + "\n")
			if strings.Contains(sc.Text(), "removed from secondary") {
				break
			}
		}
		cmd.killGroup()
		if rec := d.read(t, first.Bytes()); rec.State != "Running" || len(rec.Record.Moved) != 1 {
			t.Fatalf("killed after one image, the record is %+v\n%s", rec, first.String())
		}
		out, err := d.command(t).CombinedOutput()
		if err != nil {
			t.Fatalf("the second run: %v\n%s\n%s", err, out, g.tail())
		}
		rec := d.read(t, out)
		if rec.State != "Complete" || rec.Remaining != "0" || len(rec.Record.Failed) != 0 {
			t.Errorf("record %+v, want Complete, 0 remaining\n%s", rec, out)
		}
		assertNoCredential(t, first.String()+string(out), secrets)
		t.Logf("the killed run:\n%sthe second run:\n%s", first.String(), out)
	})
	check(t, "drain: every image downloads byte-identical, each from primary alone; secondary's bucket is empty", func(t *testing.T) {
		admin := ks.token(t, "admin", keystoneAdminPassword, "admin")
		for id, want := range images {
			img := authedImage(t, g, admin, id)
			if img["stores"] != "primary" {
				t.Errorf("image %s is in stores %q, want primary alone", id, img["stores"])
			}
			if got := authedDownload(t, g, admin, id); !bytes.Equal(got, want) {
				t.Errorf("image %s: %d bytes that differ from the %d uploaded", id, len(got), len(want))
			}
			if s3.has(t, "glance-images-2", id) {
				t.Errorf("image %s still has data in secondary's bucket", id)
			}
		}
	})
}

func authed(t *testing.T, g *glanceAPI, token, method, path string, body []byte, header ...string) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest(method, g.url+path, bytes.NewReader(body))
	req.Header.Set("X-Auth-Token", token)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return do(t, req)
}

func authedUpload(t *testing.T, g *glanceAPI, token string, data []byte, store string) string {
	t.Helper()
	status, body := authed(t, g, token, http.MethodPost, "/v2/images",
		[]byte(`{"name": "drain", "disk_format": "raw", "container_format": "bare"}`), "Content-Type", "application/json")
	var img struct{ ID string }
	if err := json.Unmarshal(body, &img); status != http.StatusCreated || err != nil {
		t.Fatalf("creating an image: %d %s", status, body)
	}
	status, body = authed(t, g, token, http.MethodPut, "/v2/images/"+img.ID+"/file", data,
		"Content-Type", "application/octet-stream", "X-Image-Meta-Store", store)
	if status != http.StatusNoContent {
		t.Fatalf("uploading to %s: %d %s\n%s", store, status, body, g.tail())
	}
	return img.ID
}

func authedImage(t *testing.T, g *glanceAPI, token, id string) map[string]any {
	t.Helper()
	status, body := authed(t, g, token, http.MethodGet, "/v2/images/"+id, nil)
	var img map[string]any
	if err := json.Unmarshal(body, &img); status != http.StatusOK || err != nil {
		t.Fatalf("GET image %s: %d %s", id, status, body)
	}
	return img
}

func authedDownload(t *testing.T, g *glanceAPI, token, id string) []byte {
	t.Helper()
	status, body := authed(t, g, token, http.MethodGet, "/v2/images/"+id+"/file", nil)
	if status != http.StatusOK {
		t.Fatalf("downloading %s: %d", id, status)
	}
	return body
}
