//go:build e2e

package glance_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

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
	From, To, State, Remaining, Job string
	Record                          struct {
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
	rec := drainRecord{From: data["from"], To: data["to"], State: data["state"], Remaining: data["remaining"], Job: data["job"]}
	if err := json.Unmarshal([]byte(data["record.json"]), &rec.Record); err != nil {
		t.Fatal(err)
	}
	return rec
}

// drainImage is an image the drain checks upload, and what kind it is.
type drainImage struct {
	kind string
	data []byte
}

// drainSet is what the drain checks hand each other: the drain as the
// render has it, the images uploaded and where, and the admin's token.
type drainSet struct {
	d           drainer
	dir         string // the release's: the script and the record outlive each check
	job         string
	images      map[string]drainImage
	byStore     map[string][]string // store → the ids of its images
	deactivated string
	admin       string // a token of Keystone's admin
}

// drainChecks: images of every kind Glance lists apart (private to two
// projects, hidden, community, public, shared with each member status,
// deactivated, one in both stores) spread over both stores; drain
// secondary into primary with the target's bucket gone (the drain fails,
// names every image, every location is kept), then killed after its
// first image (a second run resumes, moves every active image and ends
// Failed naming the deactivated one, which Glance refuses to copy), then
// with it reactivated a third run completes; every image downloads
// byte-identical from primary alone, Glance lists none in secondary and
// secondary's bucket is empty. g is a Glance behind the rendered
// [keystone_authtoken].
func drainChecks(t *testing.T, g *glanceAPI, rp rendering, ks *keystone, s3 *s3Server, secrets []*yaml.RNode) {
	ds := &drainSet{dir: t.TempDir(), images: map[string]drainImage{}, byStore: map[string][]string{}}
	if !ds.rendered(t, g, rp) {
		return
	}
	ds.uploaded(t, g, rp, ks, s3)
	if len(ds.byStore["secondary"]) != 13 {
		return
	}
	ds.runs(t, g, s3, secrets)
}

// rendered: the render holds the drain of secondary into primary, and the
// drainer runs its script as the Job would.
func (ds *drainSet) rendered(t *testing.T, g *glanceAPI, rp rendering) bool {
	return check(t, "drain: the render holds the drain of secondary into primary (its script's ConfigMap and its Job)", func(t *testing.T) {
		if rp.drainScript == "" || rp.drainJob == nil {
			t.Fatal("no drain script or Job in the render")
		}
		ds.job = rp.drainJob.GetName()
		c := lookup(t, rp.drainJob, "spec", "template", "spec", "containers", "[name=store-drain]")
		argv := stringsOf(t, c, "command")
		if len(argv) != 4 || argv[0] != "python3" || argv[2] != "secondary" || argv[3] != "primary" {
			t.Fatalf("the drain Job runs %v", argv)
		}
		ds.d = drainer{r: rp, from: argv[2], to: argv[3], url: g.url, record: filepath.Join(ds.dir, "record.json"),
			script: write(t, filepath.Join(ds.dir, "drain.py"), rp.drainScript)}
		for _, e := range containerEnv(t, c) {
			if !strings.HasPrefix(e, "GLANCE_URL=") && !strings.HasPrefix(e, "GLANCE_KRM_DRAIN_RECORD=") {
				ds.d.env = append(ds.d.env, e)
			}
		}
		if !slices.Contains(ds.d.env, "GLANCE_KRM_DRAIN_JOB="+ds.job) {
			t.Errorf("the drain Job's container is not told its Job's name %s: %v", ds.job, ds.d.env)
		}
	})
}

// uploaded puts images of every kind into both stores.
func (ds *drainSet) uploaded(t *testing.T, g *glanceAPI, rp rendering, ks *keystone, s3 *s3Server) {
	ds.admin = ks.Token(t, "admin", keystoneAdminPassword, "admin")
	check(t, "drain: images of every kind, uploaded with Keystone tokens: private to two projects, hidden, community, public, shared (pending, accepted, rejected), deactivated, in both stores", func(t *testing.T) {
		// Glance's default policy lets an admin copy images and delete a
		// location; deployments give the service user admin in the
		// service project (docs/day2.md says so).
		ks.Grant(t, "glance", "service", "admin")
		tokens := map[string]string{}
		for _, user := range []string{"drain-a", "drain-b"} {
			tokens[user] = ks.User(t, user+"-"+rp.rel.catalog)
		}
		tokens["admin"] = ds.admin
		n := 0
		add := func(kind, user, store string, fields map[string]any) string {
			n++
			data := randomBytes(t, 50_000+1_000*n)
			id := authedUploadWith(t, g, tokens[user], data, store, fields)
			ds.images[id] = drainImage{kind: kind, data: data}
			ds.byStore[store] = append(ds.byStore[store], id)
			return id
		}
		for _, user := range []string{"drain-a", "drain-b"} {
			add("private of "+user, user, "secondary", nil)
			add("private of "+user, user, "secondary", nil)
			add("private of "+user, user, "primary", nil)
		}
		add("hidden", "drain-a", "secondary", map[string]any{"os_hidden": true})
		add("hidden community", "drain-b", "secondary", map[string]any{"os_hidden": true, "visibility": "community"})
		add("community", "drain-a", "secondary", map[string]any{"visibility": "community"})
		add("public", "admin", "secondary", map[string]any{"visibility": "public"})
		projectB := ownerOf(t, g, tokens["drain-b"], ds.byStore["secondary"][2])
		for _, status := range []string{"pending", "accepted", "rejected"} {
			id := add("shared, "+status, "drain-a", "secondary", map[string]any{"visibility": "shared"})
			imageCall(t, g, tokens["drain-a"], http.MethodPost, "/v2/images/"+id+"/members", map[string]any{"member": projectB}, http.StatusOK)
			if status != "pending" {
				imageCall(t, g, tokens["drain-b"], http.MethodPut, "/v2/images/"+id+"/members/"+projectB, map[string]any{"status": status}, http.StatusOK)
			}
		}
		both := add("in both stores", "drain-b", "secondary", nil)
		copyInto(t, g, ds.admin, both, "primary")
		ds.deactivated = add("deactivated", "drain-a", "secondary", nil)
		imageCall(t, g, ds.admin, http.MethodPost, "/v2/images/"+ds.deactivated+"/actions/deactivate", nil, http.StatusNoContent)
		// What a user lists (Glance's defaults) is not every image: the
		// hidden and the community ones of another project are left out,
		// which the drain's listing must not do.
		listed := listIDs(t, g, ds.admin, "")
		for _, i := range []int{4, 5, 6} { // hidden, hidden community, community of drain-a
			if id := ds.byStore["secondary"][i]; slices.Contains(listed, id) {
				t.Errorf("Glance's default listing shows image %s (%s): this check no longer proves the drain lists it", id, ds.images[id].kind)
			}
		}
	})
}

// runs drains secondary three times: failing, killed and resumed, complete.
func (ds *drainSet) runs(t *testing.T, g *glanceAPI, s3 *s3Server, secrets []*yaml.RNode) {
	inSecondary := len(ds.byStore["secondary"])
	check(t, "drain: the target's bucket gone, every copy fails, the Job fails naming each image, no location is removed", func(t *testing.T) {
		gone := s3.dir + "/glance-images"
		if err := os.Rename(gone, gone+".away"); err != nil {
			t.Fatal(err)
		}
		out, err := ds.d.command(t).CombinedOutput()
		if renameErr := os.Rename(gone+".away", gone); renameErr != nil {
			t.Fatal(renameErr)
		}
		if err == nil {
			t.Fatalf("the drain succeeded with its target's bucket gone:\n%s", out)
		}
		rec := ds.d.read(t, out)
		if rec.State != "Failed" || len(rec.Record.Moved) != 0 || len(rec.Record.Failed) != inSecondary || rec.Remaining != strconv.Itoa(inSecondary) || rec.Job != ds.job {
			t.Errorf("record %+v, want Failed, %d failed, %d remaining, job %s\n%s", rec, inSecondary, inSecondary, ds.job, out)
		}
		for _, id := range ds.byStore["secondary"] {
			if _, named := rec.Record.Failed[id]; !named {
				t.Errorf("the failed drain does not name image %s (%s)", id, ds.images[id].kind)
			}
			if !s3.has(t, "glance-images-2", id) {
				t.Errorf("image %s lost its data in secondary", id)
			}
		}
		assertNoCredential(t, string(out)+fmt.Sprint(rec), secrets)
	})
	check(t, "drain: Glance refuses to copy a deactivated image or to remove its location (the drain names it, never reactivates it)", func(t *testing.T) {
		imageCall(t, g, ds.admin, http.MethodPost, "/v2/images/"+ds.deactivated+"/import",
			map[string]any{"method": map[string]any{"name": "copy-image"}, "stores": []string{"primary"}}, http.StatusConflict)
		imageCall(t, g, ds.admin, http.MethodDelete, "/v2/stores/secondary/"+ds.deactivated, nil, http.StatusConflict)
	})
	check(t, "drain: killed after its first image, a second run resumes, moves every active image and fails naming the deactivated one", func(t *testing.T) {
		cmd := ds.d.command(t)
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
		if rec := ds.d.read(t, first.Bytes()); rec.State != "Running" || len(rec.Record.Moved) != 1 {
			t.Fatalf("killed after one image, the record is %+v\n%s", rec, first.String())
		}
		out, err := ds.d.command(t).CombinedOutput()
		if err == nil {
			t.Errorf("the second run succeeded with a deactivated image in secondary:\n%s", out)
		}
		rec := ds.d.read(t, out)
		if rec.State != "Failed" || rec.Remaining != "1" || len(rec.Record.Failed) != 1 || !strings.Contains(rec.Record.Failed[ds.deactivated], "status deactivated") ||
			len(rec.Record.Moved) != inSecondary-2 || rec.Job != ds.job {
			t.Errorf("record %+v, want Failed, 1 remaining, the deactivated image %s failed, %d moved\n%s\n%s", rec, ds.deactivated, inSecondary-2, out, g.tail())
		}
		assertNoCredential(t, first.String()+string(out), secrets)
		t.Logf("the killed run:\n%sthe second run:\n%s", first.String(), out)
	})
	check(t, "drain: the deactivated image reactivated, a third run completes: 0 left in a fresh listing", func(t *testing.T) {
		imageCall(t, g, ds.admin, http.MethodPost, "/v2/images/"+ds.deactivated+"/actions/reactivate", nil, http.StatusNoContent)
		out, err := ds.d.command(t).CombinedOutput()
		if err != nil {
			t.Fatalf("the third run: %v\n%s\n%s", err, out, g.tail())
		}
		rec := ds.d.read(t, out)
		if rec.State != "Complete" || rec.Remaining != "0" || len(rec.Record.Failed) != 0 || !slices.Equal(rec.Record.Moved, []string{ds.deactivated}) || rec.Job != ds.job {
			t.Errorf("record %+v, want Complete, 0 remaining, %s moved\n%s", rec, ds.deactivated, out)
		}
		assertNoCredential(t, string(out), secrets)
	})
	check(t, "drain: every image downloads byte-identical, each from primary alone; Glance lists none in secondary; secondary's bucket is empty", func(t *testing.T) {
		listed := map[string]map[string]any{}
		for _, hidden := range []string{"false", "true"} {
			for _, img := range list(t, g, ds.admin, "visibility=all&member_status=all&os_hidden="+hidden) {
				listed[img["id"].(string)] = img
			}
		}
		for id, want := range ds.images {
			img := listed[id]
			if img == nil {
				t.Errorf("image %s (%s) is not listed", id, want.kind)
				continue
			}
			if img["stores"] != "primary" {
				t.Errorf("image %s (%s) is in stores %q, want primary alone", id, want.kind, img["stores"])
			}
			if got := authedDownload(t, g, ds.admin, id); !bytes.Equal(got, want.data) {
				t.Errorf("image %s (%s): %d bytes that differ from the %d uploaded", id, want.kind, len(got), len(want.data))
			}
			if s3.has(t, "glance-images-2", id) {
				t.Errorf("image %s (%s) still has data in secondary's bucket", id, want.kind)
			}
		}
	})
}

// list is every image a listing with the given filters shows, page by
// page.
func list(t *testing.T, g *glanceAPI, token, filters string) []map[string]any {
	t.Helper()
	var out []map[string]any
	path := "/v2/images?limit=5&" + filters
	for path != "" {
		status, body := authed(t, g, token, http.MethodGet, path, nil)
		var page struct {
			Images []map[string]any
			Next   string
		}
		if err := json.Unmarshal(body, &page); status != http.StatusOK || err != nil {
			t.Fatalf("GET %s: %d %s", path, status, body)
		}
		out = append(out, page.Images...)
		path = page.Next
	}
	return out
}

func listIDs(t *testing.T, g *glanceAPI, token, filters string) []string {
	t.Helper()
	var ids []string
	for _, img := range list(t, g, token, filters) {
		ids = append(ids, img["id"].(string))
	}
	return ids
}

// ownerOf is the project that owns an image (its owner's token reads it).
func ownerOf(t *testing.T, g *glanceAPI, token, id string) string {
	t.Helper()
	imgs := list(t, g, token, "id=in:"+id)
	if len(imgs) != 1 {
		t.Fatalf("image %s: listed %d times", id, len(imgs))
	}
	return imgs[0]["owner"].(string)
}

// imageCall is one Image API call with a JSON body, which must answer want.
func imageCall(t *testing.T, g *glanceAPI, token, method, path string, body any, want int) {
	t.Helper()
	var b []byte
	if body != nil {
		b, _ = json.Marshal(body)
	}
	status, out := authed(t, g, token, method, path, b, "Content-Type", "application/json")
	if status != want {
		t.Fatalf("%s %s: %d %s, want %d\n%s", method, path, status, out, want, g.tail())
	}
}

// copyInto copies an image into a second store with copy-image, as an
// admin, and waits (through the list API) until Glance lists it there.
func copyInto(t *testing.T, g *glanceAPI, admin, id, store string) {
	t.Helper()
	imageCall(t, g, admin, http.MethodPost, "/v2/images/"+id+"/import",
		map[string]any{"method": map[string]any{"name": "copy-image"}, "stores": []string{store}}, http.StatusAccepted)
	for range 120 {
		imgs := list(t, g, admin, "visibility=all&id=in:"+id)
		if len(imgs) == 1 && slices.Contains(strings.Split(fmt.Sprint(imgs[0]["stores"]), ","), store) {
			return
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Fatalf("image %s was not copied into %s\n%s", id, store, g.tail())
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

// authedUploadWith creates an image with fields besides its name and
// formats, and uploads data into store.
func authedUploadWith(t *testing.T, g *glanceAPI, token string, data []byte, store string, fields map[string]any) string {
	t.Helper()
	create := map[string]any{"name": "drain", "disk_format": "raw", "container_format": "bare"}
	maps.Copy(create, fields)
	b, _ := json.Marshal(create)
	status, body := authed(t, g, token, http.MethodPost, "/v2/images", b, "Content-Type", "application/json")
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

func authedDownload(t *testing.T, g *glanceAPI, token, id string) []byte {
	t.Helper()
	status, body := authed(t, g, token, http.MethodGet, "/v2/images/"+id+"/file", nil)
	if status != http.StatusOK {
		t.Fatalf("downloading %s: %d", id, status)
	}
	return body
}
