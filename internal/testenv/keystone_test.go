package testenv

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

// A create whose first attempt is cut after Keystone stored the user:
// the retry's 409 Conflict is that user, looked up by name, not a failure
// (a node run failed so when a starved Keystone answered too late).
func TestCreateRetriedAfterACutAttempt(t *testing.T) {
	var posts atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodPost && posts.Add(1) == 1:
			// stored, then the connection cut before the answer
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				_ = conn.Close()
			}
		case r.Method == http.MethodPost:
			w.WriteHeader(http.StatusConflict)
			_, _ = fmt.Fprint(w, `{"error":{"code":409,"message":"Duplicate entry found with name drain-a"}}`)
		case r.Method == http.MethodGet && r.URL.Query().Get("name") == "drain-a":
			_, _ = fmt.Fprint(w, `{"users":[{"id":"u-1","name":"drain-a"}],"links":{}}`)
		default:
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	defer srv.Close()
	k := &Keystone{URL: srv.URL, HTTP: srv.Client()}
	if id := k.Create(t, "users", "user", map[string]any{"name": "drain-a"}); id != "u-1" {
		t.Errorf("Create after a cut attempt: id %q, want u-1 (the stored user)", id)
	}
	if n := posts.Load(); n != 2 {
		t.Errorf("%d POSTs, want 2", n)
	}
}

// A 409 on the first attempt is somebody else's object: a failure.
func TestCreateConflictFirstTimeFails(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			_, _ = fmt.Fprint(w, `{"users":[{"id":"u-1","name":"drain-a"}],"links":{}}`)
			return
		}
		w.WriteHeader(http.StatusConflict)
	}))
	defer srv.Close()
	k := &Keystone{URL: srv.URL, HTTP: srv.Client()}
	ft := &fatalT{T: t}
	func() {
		defer func() { _ = recover() }()
		k.Create(ft, "users", "user", map[string]any{"name": "drain-a"})
	}()
	if !ft.failed {
		t.Error("a 409 on the first attempt passed")
	}
}

// fatalT records a Fatalf and stops the call there.
type fatalT struct {
	*testing.T
	failed bool
}

func (f *fatalT) Fatalf(string, ...any) {
	f.failed = true
	panic("fatal")
}
