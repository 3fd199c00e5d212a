package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// The console (services/gateway/internal/console) in a real headless
// Chromium, against `cairn up`: log in, create a session and follow its
// streaming run to the end, resume the stream after a drop, walk and move
// in the tree, verify the hash chain, the usage charts, a viewer's page
// without actions, a bad key, CSRF refusals, and that every request the
// pages made went to their own origin. Screenshots of the main pages go to
// $CAIRN_ARTIFACTS (default testdata/out, ignored by git).

const consoleScript = `{
  "defaults": {"usage": "estimate", "tokensPerSecond": 0},
  "rules": [
    {"match": {"lastRole": "user", "contains": "list files"},
     "reply": {"thinking": "The user wants the workspace.", "text": "Let me look.", "toolCalls": [{"name": "ls", "arguments": {"path": "."}}]}},
    {"match": {"lastRole": "toolResult", "tool": "ls"}, "reply": {"text": "Those are the files of the workspace."}},
    {"match": {"lastRole": "user", "contains": "long story"},
     "reply": {"tokensPerSecond": 60, "text": "Once upon a time a cairn stood on a hill. Travellers added a stone each as they passed, and the cairn grew taller every year until it could be seen from the valley. THE END."}},
    {"reply": {"text": "ok"}}
  ]
}`

// chromiumPath finds Debian's chromium; the console tests need it and fail
// without it (make test-deps installs it).
func chromiumPath(t testing.TB) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("chromium is not installed: the console tests drive a real headless Chromium; run `make test-deps` " +
		"(apt-get install chromium) or put chromium on PATH")
	return ""
}

func artifactsDir(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("CAIRN_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join("testdata", "out")
	}
	dir = filepath.Join(dir, "console")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// browser is one headless Chromium with its own profile (cookies).
type browser struct {
	ctx  context.Context
	mu   sync.Mutex
	urls []string // every request the pages made
}

func newBrowser(t testing.TB, parent context.Context) *browser {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromiumPath(t)), chromedp.NoSandbox,
		chromedp.Flag("disable-dev-shm-usage", true), chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 900))
	actx, cancelA := chromedp.NewExecAllocator(parent, opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelA() })
	b := &browser{ctx: ctx}
	if err := chromedp.Listen(ctx, func(ev any) {
		if e, ok := ev.(*network.EventRequestWillBeSent); ok {
			b.mu.Lock()
			b.urls = append(b.urls, e.Request.URL)
			b.mu.Unlock()
		}
	}); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return b
}

// run runs steps in the page, failing the test with what the page shows.
func (b *browser) run(t testing.TB, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 60*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		loc, _ := chromedp.Run(b.ctx, chromedp.Location())
		alert, _ := chromedp.Run(b.ctx, chromedp.Evaluate[string](`document.getElementById("alert") ? document.getElementById("alert").textContent : ""`))
		t.Fatalf("%s: %v (page %s, alert %q)", what, err, loc, alert)
	}
}

// eval evaluates expr in the page into a T.
func eval[T any](t testing.TB, b *browser, expr string, opts ...chromedp.EvaluateOption) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 60*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr, opts...))
	if err != nil {
		t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

func (b *browser) screenshot(t testing.TB, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 60*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)) // 100: PNG
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(artifactsDir(t), name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

func (b *browser) login(t testing.TB, base, key string) {
	t.Helper()
	b.run(t, "log in", chromedp.Navigate(base+"/login"), chromedp.WaitVisible(chromedp.ID("key")),
		chromedp.SendKeys(chromedp.ID("key"), key), chromedp.Click(chromedp.ID("login-submit")),
		chromedp.WaitVisible(chromedp.CSS(`body[data-page="sessions"]`)))
}

// poll waits until expr is true in the page.
func poll(expr string) chromedp.Action[chromedp.Void] {
	return chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingTimeout(45*time.Second))
}

func TestE2EConsole(t *testing.T) {
	chromiumPath(t) // before anything starts: fail at once, naming chromium
	u := startUpWith(t, consoleScript)
	admin := readAdminKey(t, u)
	base := u.url
	b := newBrowser(t, context.Background())

	// A bad key is refused on the login page, naming why.
	b.run(t, "bad key", chromedp.Navigate(base+"/login"), chromedp.WaitVisible(chromedp.ID("key")),
		chromedp.SendKeys(chromedp.ID("key"), "cairn_nosuchkey_0000000000000000"), chromedp.Click(chromedp.ID("login-submit")),
		chromedp.WaitVisible(chromedp.ID("login-error")),
		poll(`document.getElementById("login-error").textContent.includes("Login refused")`))
	b.screenshot(t, "login-refused")

	// Log in, create a session from the sessions page.
	b.login(t, base, admin)
	b.run(t, "create a session", poll(`document.body.dataset.loaded === "true"`),
		chromedp.Click(chromedp.CSS("#new-session summary")),
		chromedp.SendKeys(chromedp.ID("c-id"), "web1"),
		chromedp.Click(chromedp.ID("c-submit")),
		chromedp.WaitVisible(chromedp.CSS(`body[data-page="session"][data-loaded="true"]`)))

	// Follow a run with a tool call to its end, without a reload.
	b.run(t, "prompt and follow", chromedp.WaitVisible(chromedp.CSS(`body[data-stream="live"]`)),
		chromedp.SendKeys(chromedp.ID("p-text"), "please list files"),
		chromedp.Click(chromedp.ID("p-send")),
		poll(`[...document.querySelectorAll("#transcript .role-assistant .text")].some(e => e.textContent === "Those are the files of the workspace.")`),
		poll(`document.body.dataset.status === "idle"`))
	counts := eval[struct{ Final, Calls, Results, Thinking int }](t, b, `({
		Final: [...document.querySelectorAll("#transcript .text")].filter(e => e.textContent === "Those are the files of the workspace.").length,
		Calls: document.querySelectorAll("#transcript .toolcall").length,
		Results: document.querySelectorAll("#transcript .role-toolResult").length,
		Thinking: document.querySelectorAll("#transcript details.thinking").length})`)
	if counts.Final != 1 || counts.Calls != 1 || counts.Results != 1 || counts.Thinking != 1 {
		t.Errorf("the transcript after one run: %+v, want each once", counts)
	}
	b.screenshot(t, "session-output")
	b.run(t, "a phone's screen", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile))
	b.screenshot(t, "session-phone")
	b.run(t, "a laptop's screen", chromedp.EmulateViewport(1280, 900))

	// A stream dropped mid-run resumes after the last event: the story
	// arrives whole, once.
	story := "Once upon a time a cairn stood on a hill. Travellers added a stone each as they passed, and the cairn grew taller every year until it could be seen from the valley. THE END."
	b.run(t, "resume after a drop", chromedp.SendKeys(chromedp.ID("p-text"), "tell a long story"),
		chromedp.Click(chromedp.ID("p-send")),
		poll(`!!document.querySelector("#live .streaming .text")`),
		chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			_, err := chromedp.Evaluate[chromedp.Void](`window.cairnDropStream(), undefined`, chromedp.EvalIgnoreExceptions)(ctx, tg)
			if errors.Is(err, chromedp.ErrJSUndefined) {
				return nil
			}
			return err
		}),
		poll(`document.body.dataset.stream === "live"`),
		poll(`[...document.querySelectorAll("#transcript .text")].some(e => e.textContent === `+jsString(story)+`)`),
		poll(`document.body.dataset.status === "idle"`))
	stories := eval[int](t, b, `[...document.querySelectorAll("#transcript .text")].filter(e => e.textContent.includes("Once upon a time")).length`)
	if stories != 1 {
		t.Errorf("the story is shown %d times after the stream was dropped, want once", stories)
	}
	// A reload renders the same transcript from the log.
	b.run(t, "reload", chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(`body[data-loaded="true"]`)))
	afterReload := eval[int](t, b, `document.querySelectorAll("#transcript .msg").length`)
	if afterReload != 6 { // 2 user prompts, assistant+tool result+assistant, story
		t.Errorf("after a reload the transcript holds %d messages, want 6", afterReload)
	}

	// The tree: navigate back to the first answer; the leaf moves there.
	b.run(t, "tree", chromedp.Click(chromedp.ID("t-tree")), chromedp.WaitVisible(chromedp.CSS(`#tree[data-loaded="true"]`)),
		poll(`document.querySelectorAll("#tree .node").length >= 6`))
	firstAnswer := eval[string](t, b, `[...document.querySelectorAll("#tree li")].find(li => li.querySelector(".preview") && li.querySelector(".preview").textContent.startsWith("Those are the files")).dataset.entry`)
	b.screenshot(t, "session-tree")
	b.run(t, "navigate", chromedp.Click(chromedp.CSS(`#tree li[data-entry="`+firstAnswer+`"] > .node button[data-action="navigate"]`)),
		poll(`!!document.querySelector('#tree li[data-entry="`+firstAnswer+`"] > .node.leaf')`),
		chromedp.Click(chromedp.ID("t-output")),
		poll(`![...document.querySelectorAll("#transcript .text")].some(e => e.textContent.includes("Once upon a time"))`))

	// Context, tool calls and the audit.
	b.run(t, "context", chromedp.Click(chromedp.ID("t-context")), poll(`document.querySelectorAll("#context .msg").length >= 4`))
	b.screenshot(t, "session-context")
	b.run(t, "tool calls", chromedp.Click(chromedp.ID("t-tools")), poll(`document.querySelectorAll("#tools tbody tr").length === 1`))
	b.run(t, "verify", chromedp.Click(chromedp.ID("t-audit")), chromedp.Click(chromedp.ID("verify")),
		poll(`document.getElementById("verify-result").dataset.ok === "true"`))
	b.screenshot(t, "session-audit")

	// Sessions list and usage charts.
	b.run(t, "sessions", chromedp.Navigate(base+"/"), poll(`!!document.querySelector('#sessions tr[data-session="web1"]')`))
	b.screenshot(t, "sessions")
	b.run(t, "usage", chromedp.Navigate(base+"/usage"), poll(`document.body.dataset.loaded === "true"`),
		poll(`document.querySelectorAll("#chart-tokens svg rect").length >= 2`))
	b.screenshot(t, "usage")
	b.run(t, "approvals", chromedp.Navigate(base+"/approvals"), poll(`document.getElementById("approvals-state").textContent !== ""`))
	b.screenshot(t, "approvals-empty")

	// The page's own fetch without the CSRF token is refused.
	b.run(t, "csrf in the page", chromedp.Navigate(base+"/"), poll(`document.body.dataset.loaded === "true"`))
	refused := eval[struct {
		Status  int
		Message string
	}](t, b, `fetch("/v1/sessions", {method: "POST", headers: {"Content-Type": "application/json"}, body: "{}"})
			.then(r => r.json().then(j => ({Status: r.status, Message: j.error.message})))`, chromedp.EvalAwaitPromise)
	if refused.Status != 403 || !strings.Contains(refused.Message, "CSRF") {
		t.Errorf("a POST from the page without the CSRF token: %d %q, want 403 naming CSRF", refused.Status, refused.Message)
	}

	// A viewer sees the pages without one action button.
	viewer := createKey(t, base, admin, "viewer")
	b.run(t, "log out", chromedp.Click(chromedp.ID("logout")), chromedp.WaitVisible(chromedp.ID("key")))
	b.login(t, base, viewer)
	var actions struct{ List, Session, Tree int }
	b.run(t, "viewer", poll(`!!document.querySelector('#sessions tr[data-session="web1"]')`))
	actions.List = eval[int](t, b, `document.querySelectorAll("#create-form, #new-session").length`)
	b.run(t, "viewer's session", chromedp.Navigate(base+"/sessions/web1"), chromedp.WaitVisible(chromedp.CSS(`body[data-loaded="true"]`)))
	actions.Session = eval[int](t, b, `document.querySelectorAll("#prompt-form, #p-send, #p-abort").length`)
	b.run(t, "viewer's tree", chromedp.Click(chromedp.ID("t-tree")), chromedp.WaitVisible(chromedp.CSS(`#tree[data-loaded="true"]`)))
	actions.Tree = eval[int](t, b, `document.querySelectorAll("#tree button").length`)
	if actions != (struct{ List, Session, Tree int }{}) {
		t.Errorf("a viewer's pages hold action controls: %+v", actions)
	}
	b.screenshot(t, "viewer-session")

	// Every request the pages made went to their own origin.
	b.mu.Lock()
	urls := append([]string(nil), b.urls...)
	b.mu.Unlock()
	if len(urls) < 20 {
		t.Fatalf("only %d requests recorded: the network listener missed them", len(urls))
	}
	for _, raw := range urls {
		if strings.HasPrefix(raw, "data:") || raw == "about:blank" {
			continue
		}
		if !strings.HasPrefix(raw, base+"/") {
			t.Errorf("the console requested %s, outside its origin %s", raw, base)
		}
	}

	// Outside the browser: the cookie's CSRF and origin rules, and the headers.
	consoleRefusals(t, base, admin)
}

// consoleRefusals sends what an attacker's page would make a browser send.
func consoleRefusals(t *testing.T, base, admin string) {
	t.Helper()
	cookie := &http.Cookie{Name: "cairn_console", Value: admin}
	token := csrfOf(t, base, cookie)
	// Not http.DefaultTransport: TestMain's adds the admin key as a header
	// to /v1 requests, and a header would stand in for the cookie.
	bare := &http.Transport{}
	defer bare.CloseIdleConnections()
	cases := []struct {
		name, method, path, body string
		header                   map[string]string
		status                   int
		says                     string
	}{
		{"no CSRF token", "POST", "/v1/sessions", `{}`, nil, 403, "missing CSRF token"},
		{"wrong CSRF token", "POST", "/v1/sessions", `{}`, map[string]string{"X-Cairn-CSRF": "forged"}, 403, "does not match"},
		{"cross-site fetch", "POST", "/v1/sessions", `{}`, map[string]string{"X-Cairn-CSRF": token, "Sec-Fetch-Site": "cross-site"}, 403, "cross-origin"},
		{"foreign Origin", "POST", "/v1/sessions", `{}`, map[string]string{"X-Cairn-CSRF": token, "Origin": "http://evil.example"}, 403, "cross-origin"},
		{"cross-site logout", "POST", "/logout", "csrf=" + token, map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Sec-Fetch-Site": "cross-site"}, 403, "cross-origin"},
		{"logout without token", "POST", "/logout", "", map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, 403, "missing CSRF token"},
		{"the right token", "POST", "/v1/sessions", `{"id":"csrf-ok"}`, map[string]string{"X-Cairn-CSRF": token, "Origin": base}, 201, "csrf-ok"},
	}
	for _, c := range cases {
		req, _ := http.NewRequest(c.method, base+c.path, strings.NewReader(c.body))
		req.AddCookie(cookie)
		for k, v := range c.header {
			req.Header.Set(k, v)
		}
		resp, err := bare.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.status || !strings.Contains(string(data), c.says) {
			t.Errorf("%s: %d %s, want %d saying %q", c.name, resp.StatusCode, data, c.status, c.says)
		}
	}
	// A login posted from another site is refused.
	req, _ := http.NewRequest("POST", base+"/login", strings.NewReader(url.Values{"key": {admin}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	resp, err := bare.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 403 || len(resp.Cookies()) != 0 {
		t.Errorf("a cross-site login: %d with cookies %v, want 403 and none", resp.StatusCode, resp.Cookies())
	}
	// The pages' headers.
	resp, err = http.Get(base + "/login")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	csp := resp.Header.Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'self'", "frame-ancestors 'none'", "script-src 'self'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("Content-Security-Policy %q lacks %q", csp, want)
		}
	}
	if resp.Header.Get("X-Frame-Options") != "DENY" {
		t.Errorf("X-Frame-Options = %q, want DENY", resp.Header.Get("X-Frame-Options"))
	}
	// Without a login, the pages send the browser to the login form.
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err = noRedirect.Get(base + "/sessions/web1")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/login" {
		t.Errorf("a page without a login: %d to %q, want 303 to /login", resp.StatusCode, resp.Header.Get("Location"))
	}
}

// csrfOf reads the CSRF token a page carries for cookie.
func csrfOf(t *testing.T, base string, cookie *http.Cookie) string {
	t.Helper()
	req, _ := http.NewRequest("GET", base+"/", nil)
	req.AddCookie(cookie)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	page, _ := io.ReadAll(resp.Body)
	_, rest, ok := strings.Cut(string(page), `<meta name="cairn-csrf" content="`)
	token, _, _ := strings.Cut(rest, `"`)
	if !ok || token == "" {
		t.Fatalf("the sessions page holds no CSRF token (%d)", resp.StatusCode)
	}
	return token
}

func readAdminKey(t testing.TB, u *upProcess) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(u.data, "admin.key"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// createKey makes an API key of role through the API.
func createKey(t testing.TB, base, admin, role string) string {
	t.Helper()
	req, _ := http.NewRequest("POST", base+"/v1/keys", strings.NewReader(fmt.Sprintf(`{"role":%q,"name":"console test"}`, role)))
	req.Header.Set("Authorization", "Bearer "+admin)
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != 201 {
		t.Fatalf("create a %s key: %d %v %v", role, resp.StatusCode, out, err)
	}
	for _, k := range []string{"secret", "key", "token"} {
		if s, ok := out[k].(string); ok && strings.HasPrefix(s, "cairn_") {
			return s
		}
	}
	t.Fatalf("the new key's secret is not in %v", out)
	return ""
}

func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
