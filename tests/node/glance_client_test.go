//go:build e2e

package node_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// glanceClient talks to an Image API through its Service, as a client in
// the cluster would (the name resolved by CoreDNS, the ClusterIP by
// kube-proxy), with a Keystone token when it has one.
type glanceClient struct {
	url   string
	http  *http.Client
	token string
}

// statusError is an answer other than the one a call expects.
type statusError struct {
	op     string
	status int
	body   string
}

func (e *statusError) Error() string {
	return fmt.Sprintf("%s: HTTP %d: %s", e.op, e.status, e.body)
}

func (g *glanceClient) do(ctx context.Context, op, method, path string, body io.Reader, want int, header map[string]string) (*http.Response, error) {
	// When a request fails, what it got to and when says where it hung.
	var mu sync.Mutex
	var events []string
	note := func(what string) {
		mu.Lock()
		events = append(events, time.Now().Format("15:04:05.000")+" "+what)
		mu.Unlock()
	}
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		DNSDone:              func(i httptrace.DNSDoneInfo) { note(fmt.Sprintf("resolved %v %v", i.Addrs, i.Err)) },
		ConnectDone:          func(_, addr string, err error) { note(fmt.Sprintf("connected %s %v", addr, err)) },
		WroteRequest:         func(i httptrace.WroteRequestInfo) { note(fmt.Sprintf("wrote the request %v", i.Err)) },
		GotFirstResponseByte: func() { note("first response byte") },
	})
	req, err := http.NewRequestWithContext(ctx, method, g.url+path, body)
	if err != nil {
		return nil, err
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	if g.token != "" {
		req.Header.Set("X-Auth-Token", g.token)
	}
	note("sent")
	resp, err := g.http.Do(req)
	if err != nil {
		mu.Lock()
		defer mu.Unlock()
		return nil, fmt.Errorf("%s: %w [%s]", op, err, strings.Join(events, ", "))
	}
	if resp.StatusCode != want {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 2048))
		_ = resp.Body.Close()
		return nil, &statusError{op, resp.StatusCode, string(b)}
	}
	return resp, nil
}

// create makes an image record and returns its id.
func (g *glanceClient) create(ctx context.Context, name string) (string, error) {
	return g.createWith(ctx, name, nil)
}

// createWith makes an image record with fields besides its name and
// formats (visibility, os_hidden) and returns its id.
func (g *glanceClient) createWith(ctx context.Context, name string, fields map[string]any) (string, error) {
	create := map[string]any{"name": name, "disk_format": "raw", "container_format": "bare"}
	maps.Copy(create, fields)
	b, _ := json.Marshal(create)
	resp, err := g.do(ctx, "create image", http.MethodPost, "/v2/images", bytes.NewReader(b), http.StatusCreated,
		map[string]string{"Content-Type": "application/json"})
	if err != nil {
		return "", err
	}
	defer func() { _ = resp.Body.Close() }()
	var img struct{ ID string }
	if err := json.NewDecoder(resp.Body).Decode(&img); err != nil {
		return "", err
	}
	return img.ID, nil
}

// image is GET /v2/images/<id>.
func (g *glanceClient) image(ctx context.Context, id string) (map[string]any, error) {
	resp, err := g.do(ctx, "show "+id, http.MethodGet, "/v2/images/"+id, nil, http.StatusOK, nil)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	var img map[string]any
	return img, json.NewDecoder(resp.Body).Decode(&img)
}

// upload puts the image's data, into store when it is not "" (Glance's
// X-Image-Meta-Store header), else into the default store.
func (g *glanceClient) upload(ctx context.Context, id string, data []byte, store string) error {
	h := map[string]string{"Content-Type": "application/octet-stream"}
	if store != "" {
		h["X-Image-Meta-Store"] = store
	}
	resp, err := g.do(ctx, "upload "+id, http.MethodPut, "/v2/images/"+id+"/file", bytes.NewReader(data), http.StatusNoContent, h)
	if err != nil {
		return err
	}
	return resp.Body.Close()
}

// sum downloads the image's data and returns its SHA-256 and size.
func (g *glanceClient) sum(ctx context.Context, id string) ([32]byte, int64, error) {
	resp, err := g.do(ctx, "download "+id, http.MethodGet, "/v2/images/"+id+"/file", nil, http.StatusOK, nil)
	if err != nil {
		return [32]byte{}, 0, err
	}
	defer func() { _ = resp.Body.Close() }()
	h := sha256.New()
	n, err := io.Copy(h, resp.Body)
	if err != nil {
		return [32]byte{}, n, fmt.Errorf("download %s: %w", id, err)
	}
	var out [32]byte
	copy(out[:], h.Sum(nil))
	return out, n, nil
}

// roundTrip creates, uploads and downloads one image and checks the bytes.
func (g *glanceClient) roundTrip(ctx context.Context, name string, data []byte, store string) (string, error) {
	return g.roundTripWith(ctx, name, data, store, nil)
}

// roundTripWith is roundTrip of an image created with fields (createWith).
func (g *glanceClient) roundTripWith(ctx context.Context, name string, data []byte, store string, fields map[string]any) (string, error) {
	id, err := g.createWith(ctx, name, fields)
	if err != nil {
		return "", err
	}
	if err := g.upload(ctx, id, data, store); err != nil {
		return id, err
	}
	got, n, err := g.sum(ctx, id)
	if err != nil {
		return id, err
	}
	if got != sha256.Sum256(data) || n != int64(len(data)) {
		return id, fmt.Errorf("image %s downloads %d bytes that differ from the %d uploaded", id, n, len(data))
	}
	return id, nil
}

// stores is GET /v2/info/stores: each store's id and whether it is the
// default.
func (g *glanceClient) stores(ctx context.Context) (map[string]bool, error) {
	resp, err := g.do(ctx, "list stores", http.MethodGet, "/v2/info/stores", nil, http.StatusOK, nil)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	// "default" is true from glance 26 on, "true" before.
	var out struct {
		Stores []struct {
			ID      string `json:"id"`
			Default any    `json:"default"`
		} `json:"stores"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return nil, err
	}
	m := map[string]bool{}
	for _, s := range out.Stores {
		m[s.ID] = s.Default == true || s.Default == "true"
	}
	return m, nil
}

// slowDownload reads an image's data at rate bytes per second until it is
// whole or ctx ends; it returns how many bytes it read and their SHA-256.
func (g *glanceClient) slowDownload(ctx context.Context, id string, rate int) (int64, [32]byte, error) {
	resp, err := g.do(ctx, "download "+id, http.MethodGet, "/v2/images/"+id+"/file", nil, http.StatusOK, nil)
	if err != nil {
		return 0, [32]byte{}, err
	}
	defer func() { _ = resp.Body.Close() }()
	h := sha256.New()
	var n int64
	buf := make([]byte, rate/10)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		m, err := io.ReadFull(resp.Body, buf)
		h.Write(buf[:m])
		n += int64(m)
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			var out [32]byte
			copy(out[:], h.Sum(nil))
			return n, out, nil
		}
		if err != nil {
			return n, [32]byte{}, err
		}
		select {
		case <-ctx.Done():
			return n, [32]byte{}, ctx.Err()
		case <-tick.C:
		}
	}
}

// slowUpload sends image data at rate bytes per second to a new image
// until ctx ends (the upload then fails, as intended); it returns how many
// bytes the client sent. A server holding the upload reads throughout;
// one that left it waiting for a free worker reads only what the sockets
// between them buffer.
func (g *glanceClient) slowUpload(ctx context.Context, rate int) (int64, error) {
	id, err := g.create(ctx, "slow upload")
	if err != nil {
		return 0, err
	}
	body := &pacedReader{ctx: ctx, chunk: rate / 10, tick: time.NewTicker(100 * time.Millisecond)}
	defer body.tick.Stop()
	resp, err := g.do(ctx, "upload "+id, http.MethodPut, "/v2/images/"+id+"/file", body, http.StatusNoContent,
		map[string]string{"Content-Type": "application/octet-stream"})
	if err == nil {
		_ = resp.Body.Close()
	}
	return body.n.Load(), err
}

// pacedReader yields chunk bytes every tick until ctx ends.
type pacedReader struct {
	ctx   context.Context
	chunk int
	tick  *time.Ticker
	n     atomic.Int64
}

func (r *pacedReader) Read(p []byte) (int, error) {
	select {
	case <-r.ctx.Done():
		return 0, r.ctx.Err()
	case <-r.tick.C:
	}
	m := min(len(p), r.chunk)
	clear(p[:m])
	r.n.Add(int64(m))
	return m, nil
}

// call is one Image API call with a JSON body (none when body is nil).
func (g *glanceClient) call(ctx context.Context, method, path string, body any, want int) error {
	var r io.Reader
	h := map[string]string{}
	if body != nil {
		b, _ := json.Marshal(body)
		r, h["Content-Type"] = bytes.NewReader(b), "application/json"
	}
	resp, err := g.do(ctx, method+" "+path, method, path, r, want, h)
	if err != nil {
		return err
	}
	return resp.Body.Close()
}

// listed is one image as the list API shows it (with filters besides its
// id, such as visibility=all), which rewrites nothing (GET of the image
// does on 2025.2 and 2026.1, docs/day2.md).
func (g *glanceClient) listed(ctx context.Context, id, filters string) (map[string]any, error) {
	resp, err := g.do(ctx, "list "+id, http.MethodGet, "/v2/images?id=in:"+id+"&"+filters, nil, http.StatusOK, nil)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	var page struct{ Images []map[string]any }
	if err := json.NewDecoder(resp.Body).Decode(&page); err != nil {
		return nil, err
	}
	if len(page.Images) != 1 {
		return nil, fmt.Errorf("list %s: %d images", id, len(page.Images))
	}
	return page.Images[0], nil
}
