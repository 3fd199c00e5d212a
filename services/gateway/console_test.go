package gateway

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/cairn-agents/cairn/services/gateway/internal/console"
)

// The console's login cookie on a real gateway: what it sets, what it
// authenticates, and the CSRF and origin checks on everything unsafe.
// The browser test is cmd/cairn's TestE2EConsole.

var noRedirects = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

func consoleLogin(t *testing.T, f *fixture, key string, header map[string]string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest("POST", f.url+"/login", strings.NewReader(url.Values{"key": {key}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := noRedirects.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

func TestConsoleLoginSetsAStrictCookie(t *testing.T) {
	f := newFixture(t, nil)
	resp := consoleLogin(t, f, f.admin.Reveal(), map[string]string{"Origin": f.url})
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/" {
		t.Fatalf("login = %d to %q, want 303 to /", resp.StatusCode, resp.Header.Get("Location"))
	}
	cs := resp.Cookies()
	if len(cs) != 1 {
		t.Fatalf("login set %d cookies, want 1", len(cs))
	}
	c := cs[0]
	if c.Name != console.CookieName || !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != "/" || c.Secure {
		t.Errorf("cookie %+v: want %s, HttpOnly, SameSite=Strict, Path=/, not Secure over plain HTTP", c, console.CookieName)
	}
	// The cookie authenticates the API: reads without more, writes with the CSRF token.
	get := func(cookie *http.Cookie) int {
		req, _ := http.NewRequest("GET", f.url+"/v1/keys", nil)
		req.AddCookie(cookie)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := get(c); code != 200 {
		t.Errorf("GET /v1/keys with the cookie = %d, want 200", code)
	}
	post := func(header map[string]string) (int, string) {
		req, _ := http.NewRequest("POST", f.url+"/v1/keys", strings.NewReader(`{"role":"viewer"}`))
		req.AddCookie(c)
		for k, v := range header {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	tok := console.CSRFToken(f.admin.Reveal())
	attempts := []struct {
		name   string
		header map[string]string
		code   int
		says   string
	}{
		{"no token", nil, 403, "missing CSRF token"},
		{"a forged token", map[string]string{console.CSRFHeader: "forged"}, 403, "does not match"},
		{"another key's token", map[string]string{console.CSRFHeader: console.CSRFToken("cairn_other_key")}, 403, "does not match"},
		{"from another site", map[string]string{console.CSRFHeader: tok, "Sec-Fetch-Site": "cross-site"}, 403, "cross-origin"},
		{"another Origin", map[string]string{console.CSRFHeader: tok, "Origin": "https://evil.example"}, 403, "cross-origin"},
		{"the right token", map[string]string{console.CSRFHeader: tok, "Sec-Fetch-Site": "same-origin"}, 201, `"role":"viewer"`},
	}
	for _, a := range attempts {
		code, body := post(a.header)
		if code != a.code || !strings.Contains(body, a.says) {
			t.Errorf("%s: %d %s, want %d saying %q", a.name, code, body, a.code, a.says)
		}
	}
	// A bad cookie is as unauthenticated as a bad header.
	if code := get(&http.Cookie{Name: console.CookieName, Value: "cairn_nosuch_key"}); code != 401 {
		t.Errorf("GET with a bad cookie = %d, want 401", code)
	}
}

func TestConsoleLoginRefusals(t *testing.T) {
	f := newFixture(t, nil)
	for _, c := range []struct {
		name   string
		key    string
		header map[string]string
		code   int
	}{
		{"an unknown key", "cairn_0123456789abcdef_nosuchsecret", nil, 401},
		{"not a token", "hello world", nil, 401},
		{"no key", "", nil, 400},
		{"the admin key from another site", f.admin.Reveal(), map[string]string{"Sec-Fetch-Site": "cross-site"}, 403},
		{"the admin key with another Origin", f.admin.Reveal(), map[string]string{"Origin": "http://evil.example"}, 403},
	} {
		resp := consoleLogin(t, f, c.key, c.header)
		if resp.StatusCode != c.code || len(resp.Cookies()) != 0 {
			t.Errorf("%s: %d with cookies %v, want %d and no cookie", c.name, resp.StatusCode, resp.Cookies(), c.code)
		}
	}
}

func TestConsolePagesFollowTheRole(t *testing.T) {
	f := newFixture(t, nil)
	// A viewer key, made through the API.
	code, out := f.do(t, "POST", "/v1/keys", `{"role":"viewer"}`)
	if code != 201 {
		t.Fatalf("create a viewer key = %d %v", code, out)
	}
	viewer, _ := out["token"].(string)
	page := func(key, path string) (int, string, http.Header) {
		req, _ := http.NewRequest("GET", f.url+path, nil)
		if key != "" {
			req.AddCookie(&http.Cookie{Name: console.CookieName, Value: key})
		}
		resp, err := noRedirects.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), resp.Header
	}
	code, body, h := page(f.admin.Reveal(), "/sessions/s1")
	if code != 200 || !strings.Contains(body, `id="prompt-form"`) || !strings.Contains(body, console.CSRFToken(f.admin.Reveal())) {
		t.Errorf("the admin's session page (%d) lacks the prompt form or the CSRF token", code)
	}
	if csp := h.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") || !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Errorf("Content-Security-Policy = %q", csp)
	}
	if strings.Contains(body, f.admin.Reveal()) {
		t.Error("the page holds the API key itself")
	}
	code, body, _ = page(viewer, "/sessions/s1")
	for _, action := range []string{`id="prompt-form"`, `id="p-abort"`, `id="nav-summarize"`} {
		if code != 200 || strings.Contains(body, action) {
			t.Errorf("the viewer's session page (%d) holds %s", code, action)
		}
	}
	code, body, _ = page(viewer, "/")
	if code != 200 || strings.Contains(body, `id="create-form"`) {
		t.Errorf("the viewer's sessions page (%d) holds the create form", code)
	}
	if code, _, h := page("", "/usage"); code != http.StatusSeeOther || h.Get("Location") != "/login" {
		t.Errorf("a page without a login = %d to %q, want 303 to /login", code, h.Get("Location"))
	}
	if code, _, _ := page(f.admin.Reveal(), "/sessions/bad.id"); code != 400 {
		t.Errorf("a page of a bad session id = %d, want 400", code)
	}
	// Revoking the key ends the login.
	id, _ := out["id"].(string)
	if code, out := f.do(t, "DELETE", "/v1/keys/"+id, ""); code != 200 {
		t.Fatalf("revoke = %d %v", code, out)
	}
	waitFor(t, func() bool { code, _, _ := page(viewer, "/"); return code == 401 })
	// The script and the stylesheet come from the binary.
	for _, a := range []string{"/assets/console.js", "/assets/console.css"} {
		if code, body, _ := page("", a); code != 200 || len(body) < 1000 {
			t.Errorf("GET %s = %d (%d bytes)", a, code, len(body))
		}
	}
}

func TestConsoleVerifyGoesThroughTheAPI(t *testing.T) {
	f := newFixture(t, nil)
	// No log configured on this gateway: the records route answers 503, and
	// the verification says so rather than pretending.
	req, _ := http.NewRequest("GET", f.url+"/sessions/s1/verify", nil)
	req.AddCookie(&http.Cookie{Name: console.CookieName, Value: f.admin.Reveal()})
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Error struct{ Message string } `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 503 || !strings.Contains(out.Error.Message, "session log is not configured") {
		t.Errorf("verify without a log = %d %q, want 503 naming the log", resp.StatusCode, out.Error.Message)
	}
	// A bad cookie is refused by the API's own check.
	req, _ = http.NewRequest("GET", f.url+"/sessions/s1/verify", nil)
	req.AddCookie(&http.Cookie{Name: console.CookieName, Value: "cairn_nosuch_key"})
	resp2, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp2.Body.Close()
	if resp2.StatusCode != 401 {
		t.Errorf("verify with a bad cookie = %d, want 401", resp2.StatusCode)
	}
}
