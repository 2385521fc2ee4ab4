package testenv

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"
)

// Keystone is a real Keystone's Identity v3 API as its bootstrap admin:
// the one client of the real-peer suites (the chroot matrix's Keystone on
// loopback, the node's behind its Service), for the users, projects,
// roles and tokens the checks need.
type Keystone struct {
	URL   string       // the Identity v3 endpoint, …/v3
	HTTP  *http.Client // nil: http.DefaultClient
	Admin string       // a token of the bootstrap admin, project admin
	// Log is what the server logged last, added to a failure's message
	// (nil: nothing to add).
	Log func() string
}

// User creates a user with the member role in a project of its own (both
// named name, the password name-pw) and returns a project-scoped token.
func (k *Keystone) User(t testing.TB, name string) string {
	t.Helper()
	project := k.Create(t, "projects", "project", map[string]any{"name": name, "domain_id": "default"})
	user := k.Create(t, "users", "user", map[string]any{"name": name, "domain_id": "default", "password": name + "-pw"})
	k.Call(t, http.MethodPut, "/projects/"+project+"/users/"+user+"/roles/"+k.ID(t, "roles", "member"), nil, nil, http.StatusNoContent)
	return k.Token(t, name, name+"-pw", name)
}

// Grant gives a user of the default domain a role in a project, all three
// by name.
func (k *Keystone) Grant(t testing.TB, user, project, role string) {
	t.Helper()
	k.Call(t, http.MethodPut, "/projects/"+k.ID(t, "projects", project)+"/users/"+k.ID(t, "users", user)+"/roles/"+k.ID(t, "roles", role), nil, nil, http.StatusNoContent)
}

// ID is the id of the one object of a collection (projects, users, roles)
// with that name.
func (k *Keystone) ID(t testing.TB, collection, name string) string {
	t.Helper()
	var out map[string]json.RawMessage // the collection, and its links
	k.Call(t, http.MethodGet, "/"+collection+"?name="+name, nil, &out, http.StatusOK)
	var items []struct{ ID string }
	if err := json.Unmarshal(out[collection], &items); err != nil || len(items) != 1 {
		t.Fatalf("keystone has %d %s named %s (%v)", len(items), collection, name, err)
	}
	return items[0].ID
}

// Token authenticates a user of the default domain by password, scoped to
// a project of that domain.
func (k *Keystone) Token(t testing.TB, user, password, project string) string {
	t.Helper()
	body := map[string]any{"auth": map[string]any{
		"identity": map[string]any{"methods": []string{"password"}, "password": map[string]any{
			"user": map[string]any{"name": user, "domain": map[string]any{"id": "default"}, "password": password}}},
		"scope": map[string]any{"project": map[string]any{"name": project, "domain": map[string]any{"id": "default"}}},
	}}
	ans := k.send(t, http.MethodPost, "/auth/tokens", body, "", http.StatusCreated)
	token := ans.header.Get("X-Subject-Token")
	if token == "" {
		t.Fatalf("keystone gave %s no token%s", user, k.logTail())
	}
	return token
}

// ApplicationCredential creates an application credential of the user
// with userID, with the user's own project-scoped token (Keystone lets no
// one else, not the admin), restricted by accessRules when there are any
// ({"service", "method", "path"} each); its id and its secret, which
// Keystone shows this once.
func (k *Keystone) ApplicationCredential(t testing.TB, userToken, userID, name string, accessRules []map[string]string) (id, secret string) {
	t.Helper()
	fields := map[string]any{"name": name}
	if len(accessRules) > 0 {
		fields["access_rules"] = accessRules
	}
	ans := k.send(t, http.MethodPost, "/users/"+userID+"/application_credentials", map[string]any{"application_credential": fields}, userToken, http.StatusCreated)
	var out struct {
		Credential struct{ ID, Secret string } `json:"application_credential"`
	}
	if err := json.Unmarshal(ans.body, &out); err != nil || out.Credential.ID == "" || out.Credential.Secret == "" {
		t.Fatalf("keystone created application credential %s without an id and a secret (%v)%s", name, err, k.logTail())
	}
	return out.Credential.ID, out.Credential.Secret
}

// ApplicationCredentialToken authenticates with an application
// credential; the token carries the credential's project and, when it has
// them, its access rules (it may name no scope of its own).
func (k *Keystone) ApplicationCredentialToken(t testing.TB, id, secret string) string {
	t.Helper()
	body := map[string]any{"auth": map[string]any{"identity": map[string]any{
		"methods":                []string{"application_credential"},
		"application_credential": map[string]any{"id": id, "secret": secret}}}}
	token := k.send(t, http.MethodPost, "/auth/tokens", body, "", http.StatusCreated).header.Get("X-Subject-Token")
	if token == "" {
		t.Fatalf("keystone gave application credential %s no token%s", id, k.logTail())
	}
	return token
}

// Create POSTs one object of the Identity API as the admin; its id.
func (k *Keystone) Create(t testing.TB, collection, kind string, fields map[string]any) string {
	t.Helper()
	ans := k.send(t, http.MethodPost, "/"+collection, map[string]any{kind: fields}, k.Admin, http.StatusCreated)
	if ans.status == http.StatusConflict {
		// An earlier attempt that was cut created it.
		return k.ID(t, collection, fmt.Sprint(fields["name"]))
	}
	var out map[string]struct{ ID string }
	if err := json.Unmarshal(ans.body, &out); err != nil {
		t.Fatalf("keystone POST /%s: %v: %s", collection, err, ans.body)
	}
	return out[kind].ID
}

// Call sends in (nil: no body) as the admin, wants the status want, and
// decodes the answer into out (nil: not read).
func (k *Keystone) Call(t testing.TB, method, path string, in, out any, want int) {
	t.Helper()
	ans := k.send(t, method, path, in, k.Admin, want)
	if ans.status != want {
		t.Fatalf("keystone %s %s: HTTP %d, want %d: %s", method, path, ans.status, want, ans.body)
	}
	if out != nil {
		if err := json.Unmarshal(ans.body, out); err != nil {
			t.Fatalf("keystone %s %s: %v: %s", method, path, err, ans.body)
		}
	}
}

type keystoneAnswer struct {
	status int
	header http.Header
	body   []byte
}

// send retries what did not reach Keystone or what it could not answer (a
// connection refused or cut, a 5xx, while a two-core machine starts
// several Glances beside it); any other answer than want fails the test.
func (k *Keystone) send(t testing.TB, method, path string, in any, token string, want int) keystoneAnswer {
	t.Helper()
	var payload []byte
	if in != nil {
		payload, _ = json.Marshal(in)
	}
	var last error
	for try := range 5 {
		ans, err := k.once(method, path, payload, token)
		switch {
		case err != nil:
			last = err
		case ans.status >= 500:
			last = fmt.Errorf("HTTP %d: %s", ans.status, ans.body)
		case try > 0 && method == http.MethodPost && ans.status == http.StatusConflict:
			// The attempt that did not answer may have created it:
			// the caller looks it up.
			return ans
		case ans.status != want:
			t.Fatalf("keystone %s %s: HTTP %d, want %d: %s%s", method, path, ans.status, want, ans.body, k.logTail())
		default:
			return ans
		}
		time.Sleep(2 * time.Second)
	}
	t.Fatalf("keystone %s %s: %v%s", method, path, last, k.logTail())
	return keystoneAnswer{}
}

func (k *Keystone) once(method, path string, payload []byte, token string) (keystoneAnswer, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, k.URL+path, bytes.NewReader(payload))
	if err != nil {
		return keystoneAnswer{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("X-Auth-Token", token)
	}
	client := k.HTTP
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return keystoneAnswer{}, err
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return keystoneAnswer{}, err
	}
	return keystoneAnswer{resp.StatusCode, resp.Header, b}, nil
}

func (k *Keystone) logTail() string {
	if k.Log == nil {
		return ""
	}
	return "\n" + k.Log()
}
