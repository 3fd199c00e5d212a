package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairn-agents/cairn/internal/kittest"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/provider/secret"
)

// call sends one request with the given Authorization header ("" = none)
// and returns the status, the decoded body and the response headers.
func (f *fixture) call(t *testing.T, auth, method, path, body string) (int, map[string]any, http.Header) {
	t.Helper()
	req, _ := http.NewRequest(method, f.url+path, strings.NewReader(body))
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatalf("%s %s: body %q is not a JSON object", method, path, data)
	}
	return resp.StatusCode, out, resp.Header
}

func errCode(out map[string]any) string {
	e, _ := out["error"].(map[string]any)
	c, _ := e["code"].(string)
	return c
}

// newKey creates a key through the API with the caller's token.
func (f *fixture) newKey(t *testing.T, caller secret.Secret, role Role, tenant string) (secret.Secret, string) {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"role": string(role), "tenant": tenant, "name": "test " + string(role)})
	code, out, hdr := f.call(t, "Bearer "+caller.Reveal(), "POST", "/v1/keys", string(body))
	if code != http.StatusCreated {
		t.Fatalf("create %s key of %s = %d %v", role, tenant, code, out)
	}
	if hdr.Get("Cache-Control") != "no-store" {
		t.Errorf("the answer holding a token may be cached: Cache-Control %q", hdr.Get("Cache-Control"))
	}
	tok, _ := out["token"].(string)
	id, _ := out["id"].(string)
	if _, pid, err := ParseKey(secret.Secret(tok)); err != nil || id == "" || pid == [32]byte{} {
		t.Fatalf("created key %v: token does not parse: %v", out, err)
	}
	return secret.Secret(tok), id
}

// An attacker's attempts at the front door: each is 401 unauthenticated,
// names the class of problem, and shows nothing of the token sent.
func TestTokensRefused(t *testing.T) {
	f := newFixture(t, nil)
	member, memberID := f.newKey(t, f.admin, RoleMember, "acme")
	revoked, revokedID := f.newKey(t, f.admin, RoleMember, "acme")
	if code, out, _ := f.call(t, "Bearer "+f.admin.Reveal(), "DELETE", "/v1/keys/"+revokedID, ""); code != 200 || out["revokedAt"] == nil {
		t.Fatalf("revoke = %d %v", code, out)
	}
	unknown, _, _ := NewKey()
	// The member key's id with another secret.
	wrongSecret := secret.Secret(member.Reveal()[:len(member.Reveal())-8] + "00000000")
	cases := []struct{ name, auth, msg string }{
		{"no header", "", "no credentials"},
		{"basic auth", "Basic dXNlcjpwYXNz", "malformed credentials"},
		{"bearer without token", "Bearer", "malformed credentials"},
		{"bearer with space only", "Bearer ", "malformed credentials"},
		{"two tokens", "Bearer " + member.Reveal() + " " + member.Reveal(), "malformed credentials"},
		{"random words", "Bearer letmein", "malformed credentials"},
		{"key too short", "Bearer " + member.Reveal()[:40], "malformed credentials"},
		{"key with upper-case hex", "Bearer " + strings.ToUpper(member.Reveal()), "malformed credentials"},
		{"unknown key", "Bearer " + unknown.Reveal(), "unknown or revoked API key"},
		{"known id, wrong secret", "Bearer " + wrongSecret.Reveal(), "unknown or revoked API key"},
		{"revoked key", "Bearer " + revoked.Reveal(), "unknown or revoked API key"},
		{"a JWT where no issuer is configured", "Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.", "accepts API keys only"},
	}
	routes := []struct{ method, path, body string }{
		{"GET", "/v1/sessions", ""},
		{"POST", "/v1/sessions", `{"id":"s1"}`},
		{"POST", "/v1/sessions/s1/commands", `{"type":"abort"}`},
		{"GET", "/v1/sessions/s1/events", ""},
		{"GET", "/v1/keys", ""},
		{"GET", "/v1/nothing-here", ""},
	}
	for _, c := range cases {
		for _, r := range routes {
			code, out, hdr := f.call(t, c.auth, r.method, r.path, r.body)
			if code != http.StatusUnauthorized || errCode(out) != "unauthenticated" || !strings.Contains(errMsg(out), c.msg) {
				t.Errorf("%s: %s %s = %d %v; want 401 unauthenticated %q", c.name, r.method, r.path, code, out, c.msg)
			}
			if !strings.HasPrefix(hdr.Get("WWW-Authenticate"), "Bearer") {
				t.Errorf("%s: no WWW-Authenticate: Bearer challenge", c.name)
			}
			if _, tok, _ := strings.Cut(c.auth, " "); len(tok) > 20 && strings.Contains(errMsg(out), tok[6:]) {
				t.Errorf("%s: the answer shows the token: %v", c.name, out)
			}
			if strings.Contains(errMsg(out), memberID) {
				t.Errorf("%s: the answer names a key id: %v", c.name, out)
			}
		}
	}
	// The operations routes stay open.
	for _, p := range []string{"/healthz", "/readyz", "/metrics"} {
		resp, err := http.Get(f.url + p)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("%s without credentials = %d, want 200", p, resp.StatusCode)
		}
	}
}

// Roles: each principal may do what its role allows, and no more.
func TestRolesRefused(t *testing.T) {
	f := newFixture(t, nil)
	fakeOrchestrator(t, f)
	viewer, _ := f.newKey(t, f.admin, RoleViewer, "acme")
	member, _ := f.newKey(t, f.admin, RoleMember, "acme")
	tadmin, _ := f.newKey(t, f.admin, RoleTenantAdmin, "acme")
	_, otherID := f.newKey(t, f.admin, RoleMember, "globex")
	bearer := func(s secret.Secret) string { return "Bearer " + s.Reveal() }
	cases := []struct {
		name         string
		who          secret.Secret
		method, path string
		body         string
		code         int
		msg          string
	}{
		{"a viewer posts a command", viewer, "POST", "/v1/sessions/s1/commands", `{"type":"abort"}`, 403, "role viewer may not do this (it needs member or above)"},
		{"a viewer approves a call", viewer, "POST", "/v1/sessions/s1/commands", `{"type":"approve","toolCallId":"t1"}`, 403, "role viewer may not do this (it needs member or above)"},
		{"a viewer denies a call", viewer, "POST", "/v1/sessions/s1/commands", `{"type":"deny","toolCallId":"t1","reason":"no"}`, 403, "role viewer may not do this (it needs member or above)"},
		{"a viewer creates a session", viewer, "POST", "/v1/sessions", `{"id":"v1"}`, 403, "needs member"},
		{"a viewer imports", viewer, "POST", "/v1/import", ``, 403, "needs member"},
		{"a member creates a key", member, "POST", "/v1/keys", `{"role":"viewer"}`, 403, "needs tenant-admin"},
		{"a member lists keys", member, "GET", "/v1/keys", ``, 403, "needs tenant-admin"},
		{"a member revokes a key", member, "DELETE", "/v1/keys/" + otherID, ``, 403, "needs tenant-admin"},
		{"a tenant-admin creates an admin key", tadmin, "POST", "/v1/keys", `{"role":"admin"}`, 403, "role tenant-admin may not create a key of role admin"},
		{"a tenant-admin creates a key of another tenant", tadmin, "POST", "/v1/keys", `{"role":"viewer","tenant":"globex"}`, 403, "own tenant only"},
		{"a tenant-admin lists another tenant's keys", tadmin, "GET", "/v1/keys?tenant=globex", ``, 403, "own tenant's keys only"},
		{"a tenant-admin revokes another tenant's key", tadmin, "DELETE", "/v1/keys/" + otherID, ``, 404, "no key"},
		{"a tenant-admin rebuilds the read models", tadmin, "POST", "/v1/admin/projector/rebuild", ``, 403, "needs admin"},
		{"a member reads the projector's digest", member, "GET", "/v1/admin/projector/digest", ``, 403, "needs admin"},
		{"a key of an unknown role is asked for", f.admin, "POST", "/v1/keys", `{"role":"root"}`, 400, `role: unknown role "root"`},
		{"a key of a bad tenant is asked for", f.admin, "POST", "/v1/keys", `{"role":"viewer","tenant":"Acme Corp"}`, 400, "tenant:"},
		{"a key with no role is asked for", f.admin, "POST", "/v1/keys", `{"tenant":"acme"}`, 400, "role: is required"},
		{"a key with a field too many", f.admin, "POST", "/v1/keys", `{"role":"viewer","hash":"00"}`, 400, `unknown field "hash"`},
		{"a malformed key id is revoked", f.admin, "DELETE", "/v1/keys/..%2f", ``, 400, "16 hex digits"},
		{"an unknown key is revoked", f.admin, "DELETE", "/v1/keys/0123456789abcdef", ``, 404, "no key"},
	}
	for _, c := range cases {
		code, out, _ := f.call(t, bearer(c.who), c.method, c.path, c.body)
		if code != c.code || !strings.Contains(errMsg(out), c.msg) {
			t.Errorf("%s: %s %s = %d %v; want %d %q", c.name, c.method, c.path, code, out, c.code, c.msg)
		}
		if c.code == 403 && errCode(out) != "forbidden" {
			t.Errorf("%s: code %q, want forbidden", c.name, errCode(out))
		}
	}
	// What each may do.
	allowed := []struct {
		name         string
		who          secret.Secret
		method, path string
		body         string
		code         int
	}{
		{"a member posts a command", member, "POST", "/v1/sessions/s1/commands?wait=applied", `{"type":"prompt","text":"hi"}`, 200},
		{"a viewer reads a command's status", viewer, "GET", "/v1/sessions/s1/commands/c1", ``, 503}, // no log on this gateway: past the guard
		{"a tenant-admin creates a member key", tadmin, "POST", "/v1/keys", `{"role":"member"}`, 201},
		{"a tenant-admin creates a tenant-admin key", tadmin, "POST", "/v1/keys", `{"role":"tenant-admin","tenant":"acme"}`, 201},
		{"an admin creates a key of another tenant", f.admin, "POST", "/v1/keys", `{"role":"admin","tenant":"globex"}`, 201},
	}
	for _, c := range allowed {
		if code, out, _ := f.call(t, bearer(c.who), c.method, c.path, c.body); code != c.code {
			t.Errorf("%s: %s %s = %d %v; want %d", c.name, c.method, c.path, code, out, c.code)
		}
	}
	// A tenant-admin lists its tenant's keys only, and never a secret.
	code, out, _ := f.call(t, bearer(tadmin), "GET", "/v1/keys", "")
	keys, _ := out["keys"].([]any)
	if code != 200 || len(keys) != 5 {
		t.Fatalf("tenant-admin's list = %d, %d keys (%v); want acme's 5", code, len(keys), out)
	}
	raw, _ := json.Marshal(out)
	for _, k := range keys {
		k := k.(map[string]any)
		if k["tenant"] != "acme" || k["token"] != nil || k["hash"] != nil {
			t.Errorf("listed key %v: want acme's, without token or hash", k)
		}
	}
	for _, s := range []secret.Secret{viewer, member, tadmin} {
		if bytes.Contains(raw, []byte(s.Reveal()[len(tokenPrefix)+keyIDLen+1:])) {
			t.Errorf("the list shows a secret")
		}
	}
	code, out, _ = f.call(t, bearer(f.admin), "GET", "/v1/keys", "")
	if keys, _ := out["keys"].([]any); code != 200 || len(keys) != 8 {
		t.Errorf("admin's list = %d, %d keys; want all 8 (the bootstrap key too)", code, len(keys))
	}
}

// A command records who sent it; a client cannot say it is someone else.
func TestCommandsRecordThePrincipal(t *testing.T) {
	f := newFixture(t, nil)
	member, id := f.newKey(t, f.admin, RoleMember, DefaultTenant)
	auth := "Bearer " + member.Reveal()
	if code, out, _ := f.call(t, auth, "POST", "/v1/sessions/s1/commands", `{"id":"c1","type":"prompt","text":"hi"}`); code != 202 {
		t.Fatalf("post = %d %v", code, out)
	}
	if code, out, _ := f.call(t, auth, "POST", "/v1/sessions", `{"id":"s2"}`); code != 201 {
		t.Fatalf("create = %d %v", code, out)
	}
	code, out, _ := f.call(t, auth, "POST", "/v1/sessions/s1/commands", `{"id":"c2","type":"abort","principal":"key:0000000000000000"}`)
	if code != 400 || !strings.Contains(errMsg(out), "principal: is set by the gateway") {
		t.Errorf("a client's principal = %d %v, want 400", code, out)
	}
	st, err := f.js.Stream(context.Background(), f.n.CommandsStream())
	if err != nil {
		t.Fatal(err)
	}
	for _, sid := range []string{"s1", "s2"} {
		m, err := st.GetLastMsgForSubject(context.Background(), "cairn.cmd.*."+events.DefaultTenant+"."+sid) // stored by partition
		if err != nil {
			t.Fatal(err)
		}
		cmd, err := events.DecodeCommand(m.Data)
		if err != nil || cmd.Principal != "key:"+id {
			t.Errorf("stored command of %s %+v (%v): principal %q, want key:%s", sid, cmd, err, cmd.Principal, id)
		}
	}
}

// A key created on one gateway works on another, and a key revoked on one
// fails on the other within moments: each watches the keys bucket.
func TestRevocationReachesEveryGateway(t *testing.T) {
	a := newFixture(t, nil)
	b := serveFixture(t, a.js, func(c *Config) { c.BootstrapAdminKey = a.admin }) // the same bootstrap key: stored once
	key, id := a.newKey(t, a.admin, RoleViewer, "acme")
	auth := "Bearer " + key.Reveal()
	kittest.Eventually(t, 10*time.Second, "the key works on gateway b", func() bool {
		code, _, _ := b.call(t, auth, "GET", "/v1/keys/x", "") // any route: past the guard is a 404 or 405
		return code != http.StatusUnauthorized
	})
	if code, out, _ := b.call(t, "Bearer "+a.admin.Reveal(), "DELETE", "/v1/keys/"+id, ""); code != 200 || out["revokedBy"] == nil {
		t.Fatalf("revoke on b = %d %v", code, out)
	}
	for _, f := range []*fixture{a, b} {
		kittest.Eventually(t, 10*time.Second, "the revoked key fails on "+f.url, func() bool {
			code, _, _ := f.call(t, auth, "GET", "/v1/keys/x", "") // not a stream: it answers at once
			return code == http.StatusUnauthorized
		})
	}
	// A restarted gateway with the same bootstrap key does not bring back
	// a revoked bootstrap key.
	bootID, _, _ := ParseKey(a.admin)
	second, _ := a.newKey(t, a.admin, RoleAdmin, DefaultTenant)
	if code, _, _ := a.call(t, "Bearer "+second.Reveal(), "DELETE", "/v1/keys/"+bootID, ""); code != 200 {
		t.Fatalf("revoke the bootstrap key = %d", code)
	}
	c := serveFixture(t, a.js, func(c *Config) { c.BootstrapAdminKey = a.admin })
	if code, out, _ := c.call(t, "Bearer "+a.admin.Reveal(), "GET", "/v1/keys", ""); code != 401 {
		t.Errorf("a revoked bootstrap key after a restart = %d %v, want 401", code, out)
	}
}

// Two gateways given two different bootstrap keys of one id: the second refuses to start.
func TestBootstrapKeyOfAnotherSecretFails(t *testing.T) {
	a := newFixture(t, nil)
	other := secret.Secret(a.admin.Reveal()[:len(a.admin.Reveal())-4] + "abcd")
	if other == a.admin {
		other = secret.Secret(a.admin.Reveal()[:len(a.admin.Reveal())-4] + "dcba")
	}
	g, err := New(Config{JetStream: a.js, BootstrapAdminKey: other, Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	err = g.Run(ctx)
	if err == nil || !strings.Contains(err.Error(), "exists with another secret") || strings.Contains(err.Error(), other.Reveal()) {
		t.Fatalf("Run = %v, want a refusal naming the conflict, not the key", err)
	}
}

// syncBuffer is a bytes.Buffer a logger and a test share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// No secret reaches the log, the stored commands or the metrics: the
// gateway's debug log and /metrics after keys were created, used, refused
// and revoked hold none of them.
func TestSecretsStayOutOfLogsAndMetrics(t *testing.T) {
	var logs syncBuffer
	f := newFixture(t, func(c *Config) {
		c.Logger = slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	member, id := f.newKey(t, f.admin, RoleMember, DefaultTenant)
	auth := "Bearer " + member.Reveal()
	f.call(t, auth, "POST", "/v1/sessions", `{"id":"s1"}`)
	f.call(t, auth, "POST", "/v1/sessions/s1/commands", `{"type":"prompt","text":"hello"}`)
	f.call(t, auth, "POST", "/v1/keys", `{"role":"viewer"}`) // forbidden
	wrong := member.Reveal()[:len(member.Reveal())-1] + "0"
	f.call(t, "Bearer "+wrong, "GET", "/v1/sessions", "")
	f.call(t, "Bearer "+strings.Repeat("x", 30)+".y.z", "GET", "/v1/sessions", "")
	f.call(t, "Bearer "+f.admin.Reveal(), "DELETE", "/v1/keys/"+id, "")
	f.call(t, auth, "GET", "/v1/sessions", "")
	resp, err := http.Get(f.url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	st, err := f.js.Stream(context.Background(), f.n.CommandsStream())
	if err != nil {
		t.Fatal(err)
	}
	var stored []byte
	for seq := uint64(1); ; seq++ {
		m, err := st.GetMsg(context.Background(), seq)
		if err != nil {
			break
		}
		stored = append(stored, m.Data...)
	}
	if len(stored) == 0 {
		t.Fatal("no command was stored")
	}
	secretPart := func(tok string) string { return tok[len(tokenPrefix)+keyIDLen+1:] }
	for name, text := range map[string]string{"log": logs.String(), "metrics": string(metrics), "commands": string(stored)} {
		for _, s := range []string{secretPart(member.Reveal()), secretPart(f.admin.Reveal()), secretPart(wrong), strings.Repeat("x", 30)} {
			if strings.Contains(text, s) {
				t.Errorf("the %s holds a secret %s…", name, s[:8])
			}
		}
	}
	if !strings.Contains(logs.String(), "unauthenticated") || !strings.Contains(string(metrics), `cairn_gateway_auth_failures_total{route="query"}`) {
		t.Errorf("refusals are neither logged nor counted:\n%s", logs.String())
	}
}

// Every route but the operations ones has a role, and docs/security.md
// shows the table as the code has it.
func TestSecurityDocMatchesTheRoles(t *testing.T) {
	f := newFixture(t, nil)
	for _, p := range f.g.patterns {
		if _, ok := routeRoles[p]; !ok && !openRoutes[p] {
			t.Errorf("%s has no role", p)
		}
	}
	for p := range routeRoles {
		if !slices.Contains(f.g.patterns, p) {
			t.Errorf("routeRoles names %s, which is not served", p)
		}
	}
	doc, err := os.ReadFile("../../docs/security.md")
	if err != nil {
		t.Fatal(err)
	}
	const begin, end = "<!-- roles table: begin -->\n", "<!-- roles table: end -->"
	_, rest, ok1 := strings.Cut(string(doc), begin)
	table, _, ok2 := strings.Cut(rest, end)
	if !ok1 || !ok2 {
		t.Fatalf("docs/security.md lacks the markers %q and %q", begin, end)
	}
	if want := rolesTable(); table != want {
		t.Errorf("docs/security.md's table differs from routeRoles; it should read:\n%s", want)
	}
}

// rolesTable renders routeRoles as docs/security.md shows it.
func rolesTable() string {
	var b strings.Builder
	b.WriteString("| route | admin | tenant-admin | member | viewer | notes |\n|---|:-:|:-:|:-:|:-:|---|\n")
	patterns := make([]string, 0, len(routeRoles))
	for p := range routeRoles {
		patterns = append(patterns, p)
	}
	slices.SortFunc(patterns, func(a, b string) int {
		_, pa, _ := strings.Cut(a, " ")
		_, pb, _ := strings.Cut(b, " ")
		if c := strings.Compare(pa, pb); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	for _, p := range patterns {
		b.WriteString("| `" + p + "` |")
		for _, r := range Roles {
			if r.Allows(routeRoles[p]) {
				b.WriteString(" ✓ |")
			} else {
				b.WriteString("  |")
			}
		}
		b.WriteString(" " + routeNotes[p] + " |\n")
	}
	return b.String()
}

// Every operation of the OpenAPI description declares its security: the
// bearer schemes on /v1, explicitly none on the operations routes; and
// documents 401 and 403.
func TestOpenAPIDeclaresSecurity(t *testing.T) {
	var doc struct {
		Paths      map[string]map[string]json.RawMessage `json:"paths"`
		Components struct {
			SecuritySchemes map[string]any `json:"securitySchemes"`
		} `json:"components"`
	}
	if err := json.Unmarshal(openAPI, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Components.SecuritySchemes) == 0 {
		t.Fatal("no security schemes")
	}
	for path, ops := range doc.Paths {
		for method, raw := range ops {
			var op struct {
				Security  *[]map[string][]string `json:"security"`
				Responses map[string]any         `json:"responses"`
			}
			if err := json.Unmarshal(raw, &op); err != nil {
				t.Fatal(err)
			}
			name := strings.ToUpper(method) + " " + path
			if op.Security == nil {
				t.Errorf("%s declares no security", name)
				continue
			}
			if openRoutes[name] {
				if len(*op.Security) != 0 {
					t.Errorf("%s is open but declares %v", name, *op.Security)
				}
				continue
			}
			if len(*op.Security) == 0 {
				t.Errorf("%s needs a principal but declares none", name)
			}
			for _, req := range *op.Security {
				for scheme := range req {
					if doc.Components.SecuritySchemes[scheme] == nil {
						t.Errorf("%s names an unknown scheme %s", name, scheme)
					}
				}
			}
			for _, code := range []string{"401", "403"} {
				if op.Responses[code] == nil {
					t.Errorf("%s does not document %s", name, code)
				}
			}
			if strings.Contains(path, "{") && op.Responses["404"] == nil {
				t.Errorf("%s does not document 404", name)
			}
		}
	}
}

// A live event stream opened with an API key ends once the key is revoked.
func TestRevokedKeyEndsItsStream(t *testing.T) {
	f := newFixture(t, nil)
	viewer, id := f.newKey(t, f.admin, RoleViewer, DefaultTenant)
	f.created(t, "", "s1")
	req, _ := http.NewRequest("GET", f.url+"/v1/sessions/s1/events", nil)
	req.Header.Set("Authorization", "Bearer "+viewer.Reveal())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("events = %d", resp.StatusCode)
	}
	if code, _, _ := f.call(t, "Bearer "+f.admin.Reveal(), "DELETE", "/v1/keys/"+id, ""); code != 200 {
		t.Fatalf("revoke = %d", code)
	}
	body, err := io.ReadAll(resp.Body) // ends when the gateway closes the stream
	if err != nil || !strings.Contains(string(body), "the API key was revoked") {
		t.Fatalf("stream after the revocation: %v %q", err, body)
	}
}
