//go:build e2e

package glance_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

// headerRecorder is a reverse proxy in front of an S3 server that records
// the checksum headers of every request it passes on: what boto3 sends.
// The Host header passes unchanged, so the signatures still hold.
type headerRecorder struct {
	endpoint string
	mu       sync.Mutex
	seen     map[string]bool
}

func recordHeaders(t *testing.T, target string) *headerRecorder {
	t.Helper()
	h := &headerRecorder{seen: map[string]bool{}}
	to := &url.URL{Scheme: "http", Host: target}
	proxy := &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) {
		pr.SetURL(to)
		pr.Out.Host = pr.In.Host // the signed Host header
	}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		for k, v := range r.Header {
			k = strings.ToLower(k)
			if strings.HasPrefix(k, "x-amz-checksum-") || k == "x-amz-sdk-checksum-algorithm" || k == "x-amz-trailer" {
				h.seen[r.Method+" "+k] = true
			}
			if k == "content-encoding" && slices.Contains(v, "aws-chunked") {
				h.seen[r.Method+" content-encoding: aws-chunked"] = true
			}
		}
		h.mu.Unlock()
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	h.endpoint = strings.TrimPrefix(srv.URL, "http://")
	return h
}

// take returns the checksum headers seen since the last call, sorted.
func (h *headerRecorder) take() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]string, 0, len(h.seen))
	for k := range h.seen {
		out = append(out, k)
	}
	h.seen = map[string]bool{}
	sort.Strings(out)
	return out
}

// withoutEnv is the rendering with some variables taken out of
// glance-api's environment: what glance does without them.
func (r rendering) withoutEnv(t *testing.T, names ...string) rendering {
	t.Helper()
	r.container = r.container.Copy()
	if env := lookup(t, r.container, "env"); env != nil {
		env.YNode().Content = slices.DeleteFunc(env.YNode().Content, func(n *yaml.Node) bool {
			return slices.Contains(names, yaml.NewRNode(n).Field("name").Value.YNode().Value)
		})
	}
	return r
}

// secretForms are the ways a secret shows in a log: as it is, or quoted
// the way Python's urllib.parse.quote and Go's escapers write it into a URL.
func secretForms(secret string) []string {
	core := strings.TrimSpace(secret)
	return []string{core, url.QueryEscape(core), url.PathEscape(core), pyQuote(core)}
}

// logHolds tells whether a log shows a secret in one of its forms.
func logHolds(log, secret string) bool {
	return slices.ContainsFunc(secretForms(secret), func(form string) bool { return strings.Contains(log, form) })
}

// pyQuote is urllib.parse.quote(s, safe=”): every byte but ASCII letters,
// digits and _.-~ percent-encoded.
func pyQuote(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("_.-~", c) >= 0 {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// locationLines are the log's lines that show an s3:// URL, with the
// secret taken out, for a failure message.
func locationLines(log, secret string) string {
	var out []string
	for _, line := range strings.Split(log, "\n") {
		if strings.Contains(line, "s3://") || strings.Contains(line, "s3+http") {
			for _, form := range secretForms(secret) {
				line = strings.ReplaceAll(line, form, "<the secret key>")
			}
			out = append(out, line)
		}
	}
	return strings.Join(out[:min(len(out), 12)], "\n")
}

func readLog(t *testing.T, g *glanceAPI) string {
	t.Helper()
	b, err := os.ReadFile(g.log)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// knownS3Bugs measures, on one release, the S3 bugs the function dodges
// or warns about (krm/v1alpha1/s3_bugs.go), and that its release ranges
// are what this release does. backends is the example's backends.yaml.
func knownS3Bugs(t *testing.T, rel release, dir, backends string, s3 *s3Server, db *mariaDB, secrets []*yaml.RNode, root string) {
	s3BugsOnTheWire(t, rel, dir, backends, s3, db, secrets, root)
	s3BugsInLocations(t, rel, dir, backends, s3, db, secrets, root)
}

// s3BugsOnTheWire measures what a release sends to S3 and shows of a
// store's keys in its answers and logs: checksum headers, direct_url,
// debug logging.
func s3BugsOnTheWire(t *testing.T, rel release, dir, backends string, s3 *s3Server, db *mariaDB, secrets []*yaml.RNode, root string) {
	file := filepath.Join(dir, "backends.yaml")
	defer write(t, file, backends)
	rec := recordHeaders(t, s3.endpoint)
	proxied := primaryOn(backends, s3.endpoint, rec.endpoint)
	write(t, file, proxied)
	upload1k := func(t *testing.T, r rendering, name string) {
		t.Helper()
		startPod(t, r, secrets)
		g := startGlance(t, filepath.Join(root, name), r)
		defer g.stop()
		rec.take()
		upload(t, g, randomBytes(t, 1000), "primary", http.StatusNoContent)
	}
	env := v1alpha1.ChecksumEnv(rel.catalog, []*v1alpha1.GlanceBackend{{Spec: v1alpha1.GlanceBackendSpec{S3: &v1alpha1.S3BackendSpec{Host: "http://" + rec.endpoint}}}})
	check(t, "LP #2121144: with what glance-krm renders for "+rel.catalog+" on a non-AWS server, boto3 sends no checksum header", func(t *testing.T) {
		r := render(t, rel, dir, filepath.Join(root, "checksum"))
		got := map[string]string{}
		for _, kv := range containerEnv(t, r.container) {
			if k, v, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "AWS_") {
				got[k] = v
			}
		}
		want := map[string]string{}
		for _, e := range env {
			want[e[0]] = e[1]
		}
		if !maps.Equal(want, got) {
			t.Errorf("glance-api's AWS_ environment %v, want %v", got, want)
		}
		conf, _ := os.ReadFile(r.backends)
		if rendered := strings.Contains(string(conf), v1alpha1.OptionRequestChecksum+" = when_required"); rendered != v1alpha1.ReleaseAtLeast(rel.catalog, 2026, 1) {
			t.Errorf("checksum options rendered: %v\n%s", rendered, conf)
		}
		upload1k(t, r, "checksum")
		if h := rec.take(); len(h) > 0 {
			t.Errorf("boto3 sent checksum headers: %v", h)
		}
	})
	// The test of the test: without the workaround, this release's boto3
	// sends them (from 2025.1: trixie's boto3 1.37 and sid's 1.40).
	sends := v1alpha1.ReleaseAtLeast(rel.catalog, 2025, 1)
	check(t, "LP #2121144: without the workaround, "+rel.catalog+"'s boto3 sends checksum headers: "+yesNo(sends), func(t *testing.T) {
		var r rendering
		if env != nil {
			r = render(t, rel, dir, filepath.Join(root, "checksum-off")).withoutEnv(t, v1alpha1.EnvRequestChecksum, v1alpha1.EnvResponseChecksum)
		} else {
			if v1alpha1.ReleaseAtLeast(rel.catalog, 2026, 1) {
				write(t, file, strings.Replace(proxied, "      name: primary-s3-credentials\n",
					"      name: primary-s3-credentials\n  extraOptions:\n    s3_store_enable_data_integrity_protection: \"true\"\n    s3_store_request_checksum_calculation: when_supported\n", 1))
			}
			r = render(t, rel, dir, filepath.Join(root, "checksum-off"))
		}
		upload1k(t, r, "checksum-off")
		if h := rec.take(); (len(h) > 0) != sends {
			t.Errorf("checksum headers without the workaround: %v, want some: %v", h, sends)
		}
	})
	write(t, file, backends)

	primary := secretValue(t, secrets, "primary-s3-credentials")
	// show_image_direct_url: the function warns of it while locations carry
	// the keys, and explain blocks turning it on
	// (v1alpha1.LocationsLeakKeys); the check turns it on in the rendered
	// file itself and reads what an image then shows.
	refused := v1alpha1.LocationsLeakKeys(rel.catalog, map[string]v1alpha1.ConfigSection{"DEFAULT": {"show_image_direct_url": "true"}}, 1) != nil
	check(t, "show_image_direct_url on "+rel.catalog+": an image's direct_url shows its store's secret key: "+yesNo(refused)+" (glance-krm warns and explain blocks: "+yesNo(refused)+")", func(t *testing.T) {
		r := render(t, rel, dir, filepath.Join(root, "direct-url"))
		conf, err := os.ReadFile(r.apiConf)
		if err != nil || !strings.Contains(string(conf), "[DEFAULT]\n") {
			t.Fatalf("glance-api.conf has no [DEFAULT]: %v\n%s", err, conf)
		}
		write(t, r.apiConf, strings.Replace(string(conf), "[DEFAULT]\n", "[DEFAULT]\nshow_image_direct_url = true\n", 1))
		startPod(t, r, secrets)
		g := startGlance(t, filepath.Join(root, "direct-url"), r)
		defer g.stop()
		id := upload(t, g, randomBytes(t, 1000), "primary", http.StatusNoContent)
		req, _ := http.NewRequest(http.MethodGet, g.url+"/v2/images/"+id, nil)
		status, body := do(t, req)
		var image struct {
			DirectURL string `json:"direct_url"`
		}
		if err := json.Unmarshal(body, &image); err != nil || status != http.StatusOK || image.DirectURL == "" {
			t.Fatalf("GET /v2/images/%s: %d, %v, no direct_url", id, status, err)
		}
		if shows := logHolds(image.DirectURL, primary["secret-access-key"]); shows != refused {
			t.Errorf("direct_url shows the secret key: %v; glance-krm warns of the option on %s: %v", shows, rel.catalog, refused)
		}
	})
	logsKeys := v1alpha1.DebugLogsStoreKeys(rel.catalog)
	check(t, "LP #2047688, LP #2131085: with debug on, "+rel.catalog+"'s log shows a store's access key on upload, download and delete: "+yesNo(logsKeys)+", its secret key: no", func(t *testing.T) {
		gy := filepath.Join(dir, "glance.yaml")
		orig, err := os.ReadFile(gy)
		if err != nil {
			t.Fatal(err)
		}
		defer write(t, gy, string(orig))
		write(t, gy, strings.Replace(string(orig), "spec:\n", "spec:\n  logging:\n    debug: true\n", 1))
		r := render(t, rel, dir, filepath.Join(root, "debug"))
		startPod(t, r, secrets)
		g := startGlance(t, filepath.Join(root, "debug"), r)
		defer g.stop()
		id := upload(t, g, randomBytes(t, 1000), "primary", http.StatusNoContent)
		download(t, g, id)
		req, _ := http.NewRequest(http.MethodDelete, g.url+"/v2/images/"+id, nil)
		if status, _ := do(t, req); status != http.StatusNoContent {
			t.Fatalf("DELETE answered %d", status)
		}
		log := readLog(t, g)
		if got := strings.Contains(log, primary["access-key-id"]); got != logsKeys {
			t.Errorf("the debug log holds the access key: %v, want %v", got, logsKeys)
		}
		if logHolds(log, primary["secret-access-key"]) {
			t.Errorf("the debug log holds the secret key; its lines with a location:\n%s", locationLines(log, primary["secret-access-key"]))
		}
	})

}

// s3BugsInLocations measures what a release does with the keys its
// images' locations carry: a removed store, a key rotation, a '/' in
// the secret key.
func s3BugsInLocations(t *testing.T, rel release, dir, backends string, s3 *s3Server, db *mariaDB, secrets []*yaml.RNode, root string) {
	file := filepath.Join(dir, "backends.yaml")
	defer write(t, file, backends)
	// A store leaves while images are in it. Its bucket is no prefix of a
	// remaining store's (glance matches a location to a store by URL
	// prefix, keys and bucket included: a bucket "glance-images-2" would
	// match a store on bucket "glance-images" and its images be silently
	// reassigned to that store — measured, and the reason this check has
	// a server of its own).
	removed := v1alpha1.RemovedStoreLogsKeys(rel.catalog)
	check(t, "a store removed from the configuration: reading its image, "+rel.catalog+" logs its full location URL, keys included, at WARNING: "+yesNo(removed), func(t *testing.T) {
		secondary := secretValue(t, secrets, "secondary-s3-credentials")
		own := startS3(t, secondary["access-key-id"], secondary["secret-access-key"], "glance-images", "retired-store")
		two := strings.NewReplacer(
			"    host: http://"+s3.endpoint+"\n    bucket: glance-images\n", "    host: http://"+own.endpoint+"\n    bucket: glance-images\n",
			"    host: http://"+s3.endpoint+"\n    bucket: glance-images-2\n", "    host: http://"+own.endpoint+"\n    bucket: retired-store\n",
		).Replace(backends)
		write(t, file, two)
		r := render(t, rel, dir, filepath.Join(root, "before-removal"))
		startPod(t, r, secrets)
		g := startGlance(t, filepath.Join(root, "before-removal"), r)
		id := upload(t, g, randomBytes(t, 1000), "secondary", http.StatusNoContent)
		g.stop()
		docs := strings.Split(two, "\n---\n")
		kept := slices.DeleteFunc(slices.Clone(docs), func(d string) bool { return strings.Contains(d, "name: secondary\n") })
		if len(kept) != len(docs)-1 {
			t.Fatalf("backends.yaml has no one GlanceBackend named secondary")
		}
		write(t, file, strings.Join(kept, "\n---\n"))
		r = render(t, rel, dir, filepath.Join(root, "removed"))
		startPod(t, r, secrets)
		g = startGlance(t, filepath.Join(root, "removed"), r)
		defer g.stop()
		var statuses []string
		for _, path := range []string{"/v2/images/" + id, "/v2/images/" + id + "/file"} {
			resp, err := http.Get(g.url + path)
			if err != nil {
				statuses = append(statuses, err.Error())
				continue
			}
			resp.Body.Close()
			statuses = append(statuses, resp.Status)
		}
		log := readLog(t, g)
		var warned bool
		for _, line := range strings.Split(log, "\n") {
			if strings.Contains(line, " WARNING ") && logHolds(line, secondary["secret-access-key"]) {
				warned = true
			}
		}
		t.Logf("GET of the image and its data after the removal: %v", statuses)
		if warned != removed {
			t.Errorf("a WARNING line holds the removed store's secret key: %v, want %v\n%s", warned, removed, locationLines(log, secondary["secret-access-key"]))
		}
	})

	// Key rotation: an image written with one key pair, the Secret's
	// content changed to a new pair while the old one is still valid on
	// the S3 server, then the old pair revoked. What the image's location
	// holds is read from Glance's database.
	carries := v1alpha1.ReadsWithLocationKeys(rel.catalog)
	keeps := v1alpha1.LocationsCarryKeys(rel.catalog) && carries
	check(t, "key rotation on "+rel.catalog+": an image written with the old pair downloads while both pairs are valid: yes; once the old pair is revoked: "+yesNo(!carries)+"; its location still holds the old pair after it is read: "+yesNo(keeps), func(t *testing.T) {
		old := secretValue(t, secrets, "primary-s3-credentials")
		rot := startS3With(t, s3Options{region: "us-east-1", iam: true}, old["access-key-id"], old["secret-access-key"], "glance-images")
		write(t, file, primaryOn(backends, s3.endpoint, rot.endpoint))
		r := render(t, rel, dir, filepath.Join(root, "rotate-old"))
		startPod(t, r, secrets)
		g := startGlance(t, filepath.Join(root, "rotate-old"), r)
		data := randomBytes(t, 2000)
		id := upload(t, g, data, "primary", http.StatusNoContent)
		g.stop()
		location := func() string {
			rows := db.locations(t, id)
			if len(rows) != 1 {
				t.Fatalf("image %s has %d locations: %q", id, len(rows), rows)
			}
			return rows[0]
		}
		if holds := strings.Contains(location(), old["secret-access-key"]); holds != v1alpha1.LocationsCarryKeys(rel.catalog) {
			t.Errorf("the location written at upload holds the secret key: %v, want %v", holds, v1alpha1.LocationsCarryKeys(rel.catalog))
		}

		const newAccess, newSecret = "glance-krm-rotated", "rotated-e2e-secret"
		rot.addUser(t, newAccess, newSecret)
		rotated := withSecretData(t, secrets, "primary-s3-credentials", map[string]string{
			"access-key-id": newAccess, "secret-access-key": newSecret})
		r = render(t, rel, dir, filepath.Join(root, "rotate-new"))
		startPod(t, r, rotated)
		g = startGlance(t, filepath.Join(root, "rotate-new"), r)
		defer g.stop()
		if _, status := tryUpload(t, g, randomBytes(t, 1000), "primary"); status != http.StatusNoContent {
			t.Fatalf("an upload with the new key pair answered %d", status)
		}
		read := func(when string) bool {
			req, _ := http.NewRequest(http.MethodGet, g.url+"/v2/images/"+id+"/file", nil)
			status, body := do(t, req)
			readable := status == http.StatusOK && bytes.Equal(body, data)
			t.Logf("the old image %s: %d, %d bytes, byte-identical %v", when, status, len(body), readable)
			return readable
		}
		if !read("with both pairs valid") {
			t.Errorf("the image written with the old pair does not download while both pairs are valid")
		}
		rot.rekey(t, "glance-krm-s3-root", "retired-root-secret") // the old pair revoked; the new one stays
		if readable := read("after the old pair is revoked"); readable == carries {
			t.Errorf("the image written with the revoked pair downloads: %v, want %v", readable, !carries)
		}
		loc := location()
		holdsOld, holdsNew := strings.Contains(loc, old["secret-access-key"]), strings.Contains(loc, newSecret)
		t.Logf("its location after the reads holds the old secret key: %v, the new one: %v", holdsOld, holdsNew)
		if holdsOld != keeps {
			t.Errorf("its location holds the old secret key after it was read: %v, want %v", holdsOld, keeps)
		}
		if want := v1alpha1.LocationsCarryKeys(rel.catalog) && !carries; holdsNew != want {
			t.Errorf("its location holds the new secret key after it was read: %v, want %v", holdsNew, want)
		}
	})

	s3SlashInKey(t, rel, dir, backends, s3, db, secrets, root)
}

// s3SlashInKey measures LP #2134325 on a release.
func s3SlashInKey(t *testing.T, rel release, dir, backends string, s3 *s3Server, db *mariaDB, secrets []*yaml.RNode, root string) {
	carries := v1alpha1.ReadsWithLocationKeys(rel.catalog)
	file := filepath.Join(dir, "backends.yaml")
	defer write(t, file, backends)
	// LP #2134325: the releases that rewrite a location with the
	// configured pair when a caller who may modify the image reads it
	// (those that read with the configured pair while locations still
	// carry keys: LP #2127798's fix) build the new URL with urlparse,
	// which takes a '/' in the secret key for the start of the path.
	slash := "glance-krm/slash+secret/key"
	breaks := v1alpha1.S3KeyShapeWarning(rel.catalog, v1alpha1.CredentialsSecretAccessKey, []byte(slash)) != "" &&
		v1alpha1.LocationsCarryKeys(rel.catalog) && !carries
	check(t, "LP #2134325: with a '/' in the secret key, an image read by its owner on "+rel.catalog+" no longer downloads: "+yesNo(breaks), func(t *testing.T) {
		primary := secretValue(t, secrets, "primary-s3-credentials")
		own := startS3(t, primary["access-key-id"], slash, "glance-images")
		write(t, file, primaryOn(backends, s3.endpoint, own.endpoint))
		withSlash := withSecretData(t, secrets, "primary-s3-credentials", map[string]string{
			"access-key-id": primary["access-key-id"], "secret-access-key": slash})
		r := render(t, rel, dir, filepath.Join(root, "slash"))
		startPod(t, r, withSlash)
		g := startGlance(t, filepath.Join(root, "slash"), r)
		defer g.stop()
		data := randomBytes(t, 1500)
		id := upload(t, g, data, "primary", http.StatusNoContent)
		var statuses []int
		for _, path := range []string{"/v2/images/" + id, "/v2/images/" + id + "/file"} {
			req, _ := http.NewRequest(http.MethodGet, g.url+path, nil)
			status, body := do(t, req)
			statuses = append(statuses, status)
			if strings.HasSuffix(path, "/file") && status == http.StatusOK && !bytes.Equal(body, data) {
				t.Errorf("the image's data differs from what was uploaded")
			}
		}
		rows := db.locations(t, id)
		var ats []int
		for _, v := range rows {
			ats = append(ats, strings.Count(v, "@"))
		}
		t.Logf("GET of the image and of its data: %v; '@' in its locations: %v", statuses, ats)
		if broken := statuses[1] != http.StatusOK; broken != breaks {
			t.Errorf("the image's data does not download after its owner read it: %v, want %v\n%s", broken, breaks, g.tail())
		}
		if logHolds(readLog(t, g), slash) {
			t.Logf("glance-api's log holds the secret key")
		}
	})
}

// primaryOn is backends.yaml with the primary store (bucket glance-images)
// on the S3 server at endpoint to instead of from.
func primaryOn(backends, from, to string) string {
	return strings.Replace(backends, "    host: http://"+from+"\n    bucket: glance-images\n",
		"    host: http://"+to+"\n    bucket: glance-images\n", 1)
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
