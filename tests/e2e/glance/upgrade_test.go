//go:build e2e

package glance_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// TestUpgrade runs Glance's own rolling upgrade on MariaDB, as the Jobs of
// an openStackRelease bump run it: a database created by 2025.1's
// glance-manage db_sync, then the new release's `db expand` and
// `db migrate` while the old glance-api serves reads, the new glance-api,
// the old one gone, `db contract`; every image downloads byte-identical
// from the new one. Once to the next release (2025.2) and once straight
// to the next SLURP release (2026.1). `db check` says after each step
// what is left (exit 3: expand, 4: migrate, 5: contract, 0: none).
func TestUpgrade(t *testing.T) {
	byCatalog := map[string]release{}
	for _, rel := range releases(t) {
		byCatalog[rel.catalog] = rel
	}
	for _, path := range [][2]string{{"2025.1", "2025.2"}, {"2025.1", "2026.1"}} {
		from, okFrom := byCatalog[path[0]]
		to, okTo := byCatalog[path[1]]
		if !okFrom || !okTo {
			continue // releases() said which root file system is missing
		}
		t.Run(path[0]+" to "+path[1], func(t *testing.T) {
			t.Parallel()
			upgrade(t, from, to)
		})
	}
}

func upgrade(t *testing.T, from, to release) {
	secrets := readObjects(t, filepath.Join(example, "test-credentials.yaml"))
	creds := secretValue(t, secrets, "primary-s3-credentials")
	s3 := startS3(t, creds["access-key-id"], creds["secret-access-key"], "glance-images", "glance-images-2")
	dbCreds := secretValue(t, secrets, "glance-db")
	db := startMariaDB(t, "glance", dbCreds["username"], dbCreds["password"])
	root := t.TempDir()

	var old, next rendering
	var gOld *glanceAPI
	images := map[string][]byte{}
	if !check(t, from.catalog+" makes the database (db_sync) and stores three images", func(t *testing.T) {
		old = render(t, from, copyExample(t, s3.endpoint, from, db.port), filepath.Join(root, "old"))
		startPod(t, old, secrets)
		gOld = startGlance(t, filepath.Join(root, "old"), old)
		for i, store := range []string{"primary", "secondary", "primary"} {
			data := randomBytes(t, 50_000+i)
			images[upload(t, gOld, data, store, http.StatusNoContent)] = data
		}
	}) {
		t.FailNow()
	}
	t.Cleanup(gOld.stop)

	next = render(t, to, copyExample(t, s3.endpoint, to, db.port), filepath.Join(root, "new"))
	startPod(t, next, secrets)
	step := func(t *testing.T, args ...string) (int, string) {
		t.Helper()
		out, err := next.manage(t, filepath.Join(root, "new"), args...).CombinedOutput()
		var exit *exec.ExitError
		switch {
		case err == nil:
			return 0, string(out)
		case errors.As(err, &exit):
			return exit.ExitCode(), string(out)
		}
		t.Fatalf("glance-manage %v: %v\n%s", args, err, out)
		return 0, ""
	}
	check(t, "before the upgrade, "+to.catalog+"'s db check says what is left", func(t *testing.T) {
		code, out := step(t, "db", "check")
		t.Logf("db check: exit %d: %s", code, strings.TrimSpace(lastLine(out)))
		if code != 0 && code != 3 {
			t.Errorf("db check on the %s database exits %d, want 0 (no migration since) or 3 (expand first):\n%s", from.catalog, code, out)
		}
	})

	// The old API serves every image while the new release expands and
	// migrates the schema.
	var reads, failures atomic.Int64
	var firstFailure atomic.Value
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			for id, want := range images {
				select {
				case <-stop:
					return
				default:
				}
				reads.Add(1)
				if err := readImage(gOld.url, id, want); err != nil {
					failures.Add(1)
					firstFailure.CompareAndSwap(nil, err.Error())
				}
			}
		}
	})
	for _, phase := range []string{"expand", "migrate"} {
		check(t, to.catalog+"'s glance-manage db "+phase+" succeeds while "+from.catalog+"'s API serves", func(t *testing.T) {
			if code, out := step(t, "db", phase); code != 0 {
				t.Errorf("db %s exits %d:\n%s", phase, code, out)
			}
		})
	}
	close(stop)
	wg.Wait()
	check(t, from.catalog+"'s API served every read during expand and migrate", func(t *testing.T) {
		t.Logf("%d reads, %d failed", reads.Load(), failures.Load())
		if reads.Load() == 0 || failures.Load() > 0 {
			t.Errorf("%d of %d reads failed; the first: %v", failures.Load(), reads.Load(), firstFailure.Load())
		}
	})

	var gNew *glanceAPI
	if !check(t, to.catalog+"'s API starts on the expanded schema; the old one stops; db contract succeeds", func(t *testing.T) {
		gNew = serveGlance(t, filepath.Join(root, "new"), next, "/v2/info/stores", false)
		gOld.stop()
		if code, out := step(t, "db", "contract"); code != 0 {
			t.Errorf("db contract exits %d:\n%s", code, out)
		}
	}) {
		t.FailNow()
	}
	t.Cleanup(gNew.stop)
	check(t, "every image downloads byte-identical from "+to.catalog, func(t *testing.T) {
		for id, want := range images {
			if err := readImage(gNew.url, id, want); err != nil {
				t.Error(err)
			}
		}
	})
	check(t, "after the upgrade db check says none is left, and expand, migrate and contract again are no-ops", func(t *testing.T) {
		for _, phase := range []string{"check", "expand", "migrate", "contract", "check"} {
			if code, out := step(t, "db", phase); code != 0 {
				t.Errorf("db %s on the upgraded schema exits %d:\n%s", phase, code, out)
			}
		}
		id := upload(t, gNew, randomBytes(t, 1000), "primary", http.StatusNoContent)
		if !s3.has(t, "glance-images", id) {
			t.Errorf("image %s is not in glance-images", id)
		}
	})
}

// readImage downloads an image and compares it with what was uploaded.
func readImage(url, id string, want []byte) error {
	resp, err := http.Get(url + "/v2/images/" + id + "/file")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK || !bytes.Equal(got, want) {
		return fmt.Errorf("image %s: %d, %d bytes (want 200, the %d uploaded)", id, resp.StatusCode, len(got), len(want))
	}
	return nil
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
