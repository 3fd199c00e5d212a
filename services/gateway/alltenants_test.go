package gateway

import (
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/cairn-agents/cairn/pkg/events"
)

// Cairn-Tenant: * lists every tenant for platform admins on the list
// routes, reaching the projector as "*"; anyone else, and any other
// route, is refused before the projector is asked.
func TestAllTenantsHeader(t *testing.T) {
	var mu sync.Mutex
	var seen []string // tenant headers that reached the projector
	queries := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get(events.HeaderTenant))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{}`))
	})
	f := newFixture(t, func(c *Config) { c.Queries = queries })
	member, _ := f.newKey(t, f.admin, RoleMember, "acme")
	tadmin, _ := f.newKey(t, f.admin, RoleTenantAdmin, "acme")
	send := func(tok, method, path string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, f.url+path, strings.NewReader(`{}`))
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set(events.HeaderTenant, "*")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b strings.Builder
		buf := make([]byte, 4096)
		for {
			n, err := resp.Body.Read(buf)
			b.Write(buf[:n])
			if err != nil {
				break
			}
		}
		return resp.StatusCode, b.String()
	}
	for _, path := range []string{"/v1/sessions", "/v1/approvals", "/v1/audit/tool-calls", "/v1/usage"} {
		if code, body := send(f.admin.Reveal(), "GET", path); code != http.StatusOK {
			t.Errorf("an admin's * on %s = %d %s, want 200", path, code, body)
		}
	}
	mu.Lock()
	if len(seen) != 4 || seen[0] != "*" || seen[3] != "*" {
		t.Errorf("the projector saw tenants %q, want * four times", seen)
	}
	seen = nil
	mu.Unlock()
	refused := []struct {
		name, tok, method, path string
		code                    int
		want                    string
	}{
		{"a member lists every tenant's sessions", member.Reveal(), "GET", "/v1/sessions", 403, `"forbidden"`},
		{"a tenant-admin lists every tenant's usage", tadmin.Reveal(), "GET", "/v1/usage", 403, `"forbidden"`},
		{"a member reads a session of every tenant", member.Reveal(), "GET", "/v1/sessions/s1", 403, `"forbidden"`},
		{"an admin reads one session of every tenant", f.admin.Reveal(), "GET", "/v1/sessions/s1", 400, "Cairn-Tenant header: \\\"*\\\""},
		{"an admin reads entries of every tenant", f.admin.Reveal(), "GET", "/v1/sessions/s1/entries", 400, "Cairn-Tenant header"},
		{"an admin follows a stream of every tenant", f.admin.Reveal(), "GET", "/v1/sessions/s1/events", 400, "Cairn-Tenant header"},
		{"an admin creates a session in every tenant", f.admin.Reveal(), "POST", "/v1/sessions", 400, "Cairn-Tenant header"},
	}
	for _, c := range refused {
		if code, body := send(c.tok, c.method, c.path); code != c.code || !strings.Contains(body, c.want) {
			t.Errorf("%s: %d %s, want %d with %s", c.name, code, body, c.code, c.want)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 0 {
		t.Errorf("refused requests reached the projector with %q", seen)
	}
}
