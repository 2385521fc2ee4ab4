//go:build e2e

package glance_test

import (
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// uploadShaping renders the typed S3 options that shape uploads (multipart,
// a bucket created on put) and shows what a chunk glance-krm refuses would
// do.
func (m *multiStoreRun) uploadShaping() {
	t := m.t
	// The typed S3 options that shape uploads: multipart above
	// largeObjectSize in parts of largeObjectChunkSize (MiB), and a bucket
	// created on first upload.
	write(t, m.backends, strings.NewReplacer(
		"    bucket: glance-images\n", "    bucket: glance-images\n    largeObjectSize: 5\n    largeObjectChunkSize: 5\n",
		"    bucket: glance-images-2\n", "    bucket: glance-created-on-put\n    createBucketOnPut: true\n",
	).Replace(m.original))
	var g5 *glanceAPI
	if !check(t, "glance-api starts with largeObjectSize, largeObjectChunkSize and createBucketOnPut rendered", func(t *testing.T) {
		r5 := render(t, m.rel, m.dir, filepath.Join(m.root, "v5"))
		for _, want := range []string{"s3_store_large_object_size = 5\n", "s3_store_large_object_chunk_size = 5\n", "s3_store_create_bucket_on_put = true\n"} {
			if conf, _ := os.ReadFile(r5.backends); !strings.Contains(string(conf), want) {
				t.Fatalf("backends.conf lacks %q", want)
			}
		}
		startPod(t, r5, m.secrets)
		g5 = startGlance(t, filepath.Join(m.root, "v5"), r5)
	}) {
		t.FailNow()
	}
	t.Cleanup(g5.stop)
	check(t, "an image larger than largeObjectSize is uploaded in parts of largeObjectChunkSize and downloads byte-identical", func(t *testing.T) {
		data := randomBytes(t, 12<<20) // 12 MiB: three 5 MiB parts
		id := upload(t, g5, data, "primary", http.StatusNoContent)
		if etag := m.s3.etag(t, "glance-images", id); !strings.HasSuffix(etag, "-3") {
			t.Errorf("object %s has ETag %q: not a 3-part multipart upload", id, etag)
		}
		if got := download(t, g5, id); !bytes.Equal(got, data) {
			t.Errorf("downloaded %d bytes that differ from the %d uploaded", len(got), len(data))
		}
	})
	check(t, "createBucketOnPut creates the missing bucket on the first upload", func(t *testing.T) {
		id := upload(t, g5, randomBytes(t, 1000), "secondary", http.StatusNoContent)
		if !m.s3.has(t, "glance-created-on-put", id) {
			t.Errorf("image %s is not in the bucket created on put", id)
		}
	})
	g5.stop()

	// What the function refuses, measured: a multipart chunk below 5 MiB,
	// written into the rendered backends.conf by hand, disables the store
	// in glance_store (BadStoreConfiguration); the other store still works.
	write(t, m.backends, m.original)
	check(t, "a largeObjectChunkSize below 5 (refused by glance-krm) disables the store in this glance_store", func(t *testing.T) {
		rc := render(t, m.rel, m.dir, filepath.Join(m.root, "chunk"))
		conf, err := os.ReadFile(rc.backends)
		if err != nil {
			t.Fatal(err)
		}
		write(t, rc.backends, strings.Replace(string(conf), "[primary]\n", "[primary]\ns3_store_large_object_chunk_size = 4\n", 1))
		startPod(t, rc, m.secrets)
		gc := startGlance(t, filepath.Join(m.root, "chunk"), rc)
		defer gc.stop()
		if _, status := tryUpload(t, gc, randomBytes(t, 1000), "primary"); status != http.StatusGone {
			t.Errorf("upload to the store with a 4 MiB chunk answered %d, want 410 (disabled)", status)
		}
		upload(t, gc, randomBytes(t, 1000), "secondary", http.StatusNoContent)
	})
}

// addressing renders virtual-hosted bucket addressing, and on the newest
// release its checksum options through extraOptions.
func (m *multiStoreRun) addressing() {
	t := m.t
	// bucketURLFormat virtual: glance_store addresses <bucket>.<host>,
	// which the pod's /etc/hosts resolves to the loopback S3 server.
	const domain = "s3.glance-krm.test"
	virtual := startS3In(t, "us-east-1", domain, m.creds["access-key-id"], m.creds["secret-access-key"], "glance-images-virtual")
	_, port, _ := strings.Cut(virtual.endpoint, ":")
	write(t, m.backends, strings.Replace(m.original, "    host: http://"+m.s3.endpoint+"\n    bucket: glance-images\n",
		"    host: http://"+domain+":"+port+"\n    bucket: glance-images-virtual\n    bucketURLFormat: virtual\n", 1))
	check(t, "bucketURLFormat virtual uploads to <bucket>.<host>", func(t *testing.T) {
		rv := render(t, m.rel, m.dir, filepath.Join(m.root, "virtual"))
		// Only <bucket>.<host> resolves: a path-style request to <host>
		// would fail, so the upload proves virtual-hosted addressing.
		rv.hosts = write(t, filepath.Join(m.root, "virtual-hosts"), "127.0.0.1 localhost\n127.0.0.1 glance-images-virtual."+domain+"\n")
		if conf, _ := os.ReadFile(rv.backends); !strings.Contains(string(conf), "s3_store_bucket_url_format = virtual\n") {
			t.Fatalf("backends.conf:\n%s", conf)
		}
		startPod(t, rv, m.secrets)
		gv := startGlance(t, filepath.Join(m.root, "virtual"), rv)
		defer gv.stop()
		data := randomBytes(t, 2000)
		id := upload(t, gv, data, "primary", http.StatusNoContent)
		if !virtual.has(t, "glance-images-virtual", id) {
			t.Errorf("image %s is not in glance-images-virtual", id)
		}
		if got := download(t, gv, id); !bytes.Equal(got, data) {
			t.Error("the image downloads different")
		}
	})

	if m.rel.catalog == "2026.2" {
		// A store option that only the newest glance_store has, set through
		// extraOptions: the release's catalog admits it and uploads work.
		write(t, m.backends, strings.Replace(m.original, "      name: primary-s3-credentials\n",
			"      name: primary-s3-credentials\n  extraOptions:\n    s3_store_request_checksum_calculation: when_required\n    s3_store_response_checksum_validation: when_required\n", 1))
		check(t, "the newest release's checksum options, through extraOptions, are rendered and uploads work", func(t *testing.T) {
			rn := render(t, m.rel, m.dir, filepath.Join(m.root, "newest"))
			if conf, _ := os.ReadFile(rn.backends); !strings.Contains(string(conf), "s3_store_request_checksum_calculation = when_required\n") {
				t.Fatalf("backends.conf:\n%s", conf)
			}
			startPod(t, rn, m.secrets)
			gn := startGlance(t, filepath.Join(m.root, "newest"), rn)
			defer gn.stop()
			id := upload(t, gn, randomBytes(t, 3000), "primary", http.StatusNoContent)
			if !m.s3.has(t, "glance-images", id) {
				t.Errorf("image %s is not in glance-images", id)
			}
		})
	}
}

// region renders spec.s3.region for a server that accepts only its own
// region.
func (m *multiStoreRun) region() {
	t := m.t
	// spec.s3.region on a server that accepts only its own region: the
	// upload works because glance_store signs for the rendered region, and
	// fails when the region is left out (the test of the test).
	const region = "eu-glance-krm-1"
	regional := startS3In(t, region, "", m.creds["access-key-id"], m.creds["secret-access-key"], "glance-images-regional")
	withRegion := func(region string) string {
		out := strings.Replace(m.original, "    host: http://"+m.s3.endpoint+"\n    bucket: glance-images\n",
			"    host: http://"+regional.endpoint+"\n    bucket: glance-images-regional\n", 1)
		if region != "" {
			out = strings.Replace(out, "    bucket: glance-images-regional\n", "    bucket: glance-images-regional\n    region: "+region+"\n", 1)
		}
		return out
	}
	for _, c := range []struct {
		name, region string
		want         int
	}{
		{"without spec.s3.region the region's S3 server refuses the upload", "", 0},
		{"with spec.s3.region rendered the upload lands in the region's bucket", region, http.StatusNoContent},
	} {
		write(t, m.backends, withRegion(c.region))
		check(t, c.name, func(t *testing.T) {
			rr := render(t, m.rel, m.dir, filepath.Join(m.root, "region-"+cmpOr(c.region, "none")))
			if conf, _ := os.ReadFile(rr.backends); strings.Contains(string(conf), "s3_store_region_name") != (c.region != "") {
				t.Fatalf("backends.conf:\n%s", conf)
			}
			startPod(t, rr, m.secrets)
			gr := startGlance(t, filepath.Join(m.root, "region-"+cmpOr(c.region, "none")), rr)
			defer gr.stop()
			id, status := tryUpload(t, gr, randomBytes(t, 1000), "primary")
			switch {
			case c.want == 0 && status < 400:
				t.Errorf("the upload signed for us-east-1 was accepted (%d) by a server of region %s", status, region)
			case c.want != 0 && (status != c.want || !regional.has(t, "glance-images-regional", id)):
				t.Errorf("upload answered %d, want %d, and must land in glance-images-regional", status, c.want)
			}
		})
	}
}

// privateCA serves S3 over TLS with a private CA that glance trusts only
// through spec.s3.caBundleRef.
func (m *multiStoreRun) privateCA() {
	t := m.t
	// TLS with a private CA: the S3 server's certificate is signed by a CA
	// made here; glance trusts it only through spec.s3.caBundleRef, which
	// glance-krm mounts and names in s3_store_cacert.
	ca := makeTLS(t)
	secure := startS3With(t, s3Options{region: "us-east-1", tls: ca}, m.creds["access-key-id"], m.creds["secret-access-key"], "glance-images-tls")
	caSecret, err := yaml.Parse("apiVersion: v1\nkind: Secret\nmetadata: {name: s3-ca}\nstringData: {}\n")
	if err != nil {
		t.Fatal(err)
	}
	if err := caSecret.PipeE(yaml.SetField("stringData", yaml.NewMapRNode(&map[string]string{"ca.crt": string(ca.caPEM)}))); err != nil {
		t.Fatal(err)
	}
	withCA := append(slices.Clone(m.secrets), caSecret)
	for _, c := range []struct {
		name string
		ca   bool
	}{
		{"without spec.s3.caBundleRef glance does not trust the S3 server's private CA", false},
		{"with spec.s3.caBundleRef the upload over HTTPS lands in the bucket", true},
	} {
		out := strings.Replace(m.original, "    host: http://"+m.s3.endpoint+"\n    bucket: glance-images\n",
			"    host: https://"+secure.endpoint+"\n    bucket: glance-images-tls\n", 1)
		if c.ca {
			out = strings.Replace(out, "    bucket: glance-images-tls\n", "    bucket: glance-images-tls\n    caBundleRef: {kind: Secret, name: s3-ca}\n", 1)
		}
		write(t, m.backends, out)
		check(t, c.name, func(t *testing.T) {
			dirName := "tls-" + map[bool]string{true: "ca", false: "none"}[c.ca]
			rt := render(t, m.rel, m.dir, filepath.Join(m.root, dirName))
			if conf, _ := os.ReadFile(rt.backends); strings.Contains(string(conf), "s3_store_cacert = /etc/glance/glance.conf.d/s3-ca/primary.pem") != c.ca {
				t.Fatalf("backends.conf:\n%s", conf)
			}
			startPod(t, rt, withCA)
			gt := startGlance(t, filepath.Join(m.root, dirName), rt)
			defer gt.stop()
			id, status := tryUpload(t, gt, randomBytes(t, 1000), "primary")
			switch {
			case !c.ca && status < 400:
				t.Errorf("the upload was accepted (%d) without the CA", status)
			case c.ca && (status != http.StatusNoContent || !secure.has(t, "glance-images-tls", id)):
				t.Errorf("upload answered %d, want 204, and must land in glance-images-tls", status)
			}
		})
	}
}
