package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/cairn-agents/cairn/internal/kittest"
	"github.com/cairn-agents/cairn/pkg/events"
)

// Two tenants over real processes: `cairn up`, and `cairn` client
// processes with each tenant's own key. The same session id in both is two
// sessions; each tenant sees only its own sessions, entries, events (SSE
// resumed with Last-Event-ID and ?after=), command status, audit and
// usage; another tenant's session answers byte for byte as a missing one
// (its event stream too: 404);
// only the platform admin acts for another tenant (--tenant).
func TestE2ETwoTenantsSeeOnlyTheirOwn(t *testing.T) {
	u := startUp(t)
	recorded := []string{"XDG_CONFIG_HOME=" + os.Getenv("XDG_CONFIG_HOME")} // where `cairn up` recorded its admin key
	keys := map[string]string{}
	for _, tn := range []string{"acme", "beta"} {
		out, err := u.cairnAs(t, recorded, "keys", "create", "--tenant", tn, "--role", "member", "--name", tn+" member")
		if err != nil {
			t.Fatalf("keys create --tenant %s: %v %s", tn, err, out)
		}
		keys[tn] = lastLine(out)
	}
	principal := func(tn string) string { id, _, _ := splitKey(keys[tn]); return "key:" + id }

	// Both create session "same" and prompt it; acme also has "aonly".
	for _, tn := range []string{"acme", "beta"} {
		if out, err := u.cairnAs(t, nil, "--token", keys[tn], "session", "new", "--id", "same"); err != nil || strings.TrimSpace(out) != "same" {
			t.Fatalf("%s: session new: %v %s", tn, err, out)
		}
		if out, err := u.cairnAs(t, nil, "--token", keys[tn], "prompt", "same", tn+" asks: please list files"); err != nil || !strings.Contains(out, "I see the files.") {
			t.Fatalf("%s: prompt: %v %s", tn, err, out)
		}
	}
	if out, err := u.cairnAs(t, nil, "--token", keys["acme"], "session", "new", "--id", "aonly"); err != nil {
		t.Fatalf("acme: session new aonly: %v %s", err, out)
	}
	if out, err := u.cairnAs(t, nil, "--token", keys["acme"], "prompt", "aonly", "acme secret: please list files"); err != nil || !strings.Contains(out, "I see the files.") {
		t.Fatalf("acme: prompt aonly: %v %s", err, out)
	}

	// Each tenant's "same" holds only its own prompt.
	for tn, other := range map[string]string{"acme": "beta", "beta": "acme"} {
		code, body := u.as(t, keys[tn], "GET", "/v1/sessions/same/export?format=jsonl", nil)
		if code != 200 || !strings.Contains(body, tn+" asks") || strings.Contains(body, other+" asks") || strings.Contains(body, "acme secret") {
			t.Errorf("%s's log of same: %d %s", tn, code, body)
		}
		kittest.Eventually(t, 30*time.Second, tn+"'s session list", func() error {
			code, body := u.as(t, keys[tn], "GET", "/v1/sessions", nil)
			if code != 200 || strings.Count(body, `"id":"same"`) != 1 || strings.Contains(body, "aonly") != (tn == "acme") {
				return fmt.Errorf("%d %s", code, body)
			}
			return nil
		})
	}

	// beta asking for acme's aonly gets what it gets for a session that
	// exists nowhere, on every route that names a session.
	cmdID := create1ForTenant(t, u, keys["acme"], "aonly")
	routes := []string{"", "/entries", "/entries?after=1", "/context", "/tree", "/export", "/export?format=jsonl",
		"/records", "/replay", "/commands/" + cmdID}
	for _, r := range routes {
		codeA, bodyA := u.as(t, keys["beta"], "GET", "/v1/sessions/aonly"+r, nil)
		codeM, bodyM := u.as(t, keys["beta"], "GET", "/v1/sessions/nowhere"+r, nil)
		bodyM = strings.ReplaceAll(bodyM, "nowhere", "aonly")
		if codeA != codeM || bodyA != bodyM || strings.Contains(bodyA, "acme") {
			t.Errorf("GET %s: beta gets %d %s for acme's session, %d %s for a missing one", r, codeA, bodyA, codeM, bodyM)
		}
		if codeA != http.StatusNotFound && !strings.HasPrefix(r, "/commands/") {
			t.Errorf("GET %s of acme's session as beta = %d, want 404", r, codeA)
		}
	}
	// A command id of acme's (its prompt's), guessed in beta's own session
	// of the same id, is a command beta never sent.
	acmePrompt := promptIDForTenant(t, u, keys["acme"], "same")
	codeA, bodyA := u.as(t, keys["beta"], "GET", "/v1/sessions/same/commands/"+acmePrompt, nil)
	codeM, bodyM := u.as(t, keys["beta"], "GET", "/v1/sessions/same/commands/never-sent", nil)
	if codeA != codeM || strings.ReplaceAll(bodyM, "never-sent", "X") != strings.ReplaceAll(bodyA, acmePrompt, "X") || strings.Contains(bodyA, principal("acme")) {
		t.Errorf("acme's command id in beta's session: %d %s; a command never sent: %d %s", codeA, bodyA, codeM, bodyM)
	}
	// SSE, fresh and resumed after an event (Last-Event-ID, ?after=): the
	// stream of acme's session as beta is a missing session's, the 404 the
	// JSON routes answer, no event of acme's in it.
	for _, resume := range []struct{ header, query string }{{"", ""}, {"1", ""}, {"", "?after=1"}, {"", "?from=start"}} {
		a := u.sseUntilLive(t, keys["beta"], "/v1/sessions/aonly/events"+resume.query, resume.header)
		m := u.sseUntilLive(t, keys["beta"], "/v1/sessions/nowhere/events"+resume.query, resume.header)
		m = strings.ReplaceAll(m, "nowhere", "aonly")
		if a != m || strings.Contains(a, "data:") || !strings.HasPrefix(a, "404 ") {
			t.Errorf("SSE %+v: beta gets %q for acme's session, %q for a missing one", resume, a, m)
		}
	}
	if own := u.sseUntilLive(t, keys["acme"], "/v1/sessions/aonly/events?after=0", ""); !strings.Contains(own, "data:") {
		t.Errorf("acme's own resumed stream holds no event: %q", own)
	}

	// Sending a command to acme's session as beta is a command to beta's
	// missing session: refused as such, and acme's log is untouched.
	_, before := u.as(t, keys["acme"], "GET", "/v1/sessions/aonly/export?format=jsonl", nil)
	code, body := u.as(t, keys["beta"], "POST", "/v1/sessions/aonly/commands?wait=applied", strings.NewReader(`{"type":"prompt","text":"beta was here"}`))
	if code == http.StatusAccepted || code == http.StatusOK || strings.Contains(body, "acme") {
		t.Errorf("beta's prompt to acme's session = %d %s, want a refusal", code, body)
	}
	if _, after := u.as(t, keys["acme"], "GET", "/v1/sessions/aonly/export?format=jsonl", nil); after != before || strings.Contains(after, "beta was here") {
		t.Errorf("beta's prompt reached acme's log")
	}

	// Audit and usage: each tenant's rows are its own principal's.
	for _, tn := range []string{"acme", "beta"} {
		kittest.Eventually(t, 30*time.Second, tn+"'s audit and usage", func() error {
			code, body := u.as(t, keys[tn], "GET", "/v1/audit/tool-calls", nil)
			var audit struct {
				ToolCalls []struct {
					Session, Principal string
				} `json:"toolCalls"`
			}
			if err := json.Unmarshal([]byte(body), &audit); code != 200 || err != nil {
				return fmt.Errorf("audit: %d %s", code, body)
			}
			want := map[string]int{"acme": 2, "beta": 1}[tn]
			if len(audit.ToolCalls) != want {
				return fmt.Errorf("audit has %d calls, want %d: %s", len(audit.ToolCalls), want, body)
			}
			for _, c := range audit.ToolCalls {
				if c.Principal != principal(tn) {
					return fmt.Errorf("audit row of %s names %q", c.Session, c.Principal)
				}
			}
			code, body = u.as(t, keys[tn], "GET", "/v1/usage", nil)
			var usage struct {
				Usage []struct {
					ByPrincipal map[string]any `json:"byPrincipal"`
				} `json:"usage"`
			}
			if err := json.Unmarshal([]byte(body), &usage); code != 200 || err != nil || len(usage.Usage) == 0 {
				return fmt.Errorf("usage: %d %s", code, body)
			}
			for _, row := range usage.Usage {
				for p := range row.ByPrincipal {
					if p != principal(tn) {
						return fmt.Errorf("%s's usage names %s", tn, p)
					}
				}
			}
			return nil
		})
	}

	// --tenant: the admin acts for acme; a member may not act for another.
	if out, err := u.cairnAs(t, recorded, "--tenant", "acme", "sessions"); err != nil || !strings.Contains(out, "aonly") {
		t.Errorf("admin sessions --tenant acme: %v %s", err, out)
	}
	if out, err := u.cairnAs(t, recorded, "sessions"); err != nil || strings.Contains(out, "aonly") {
		t.Errorf("admin sessions in its own tenant: %v %s", err, out)
	}
	if out, err := u.cairnAs(t, nil, "--token", keys["beta"], "--tenant", "acme", "sessions"); err == nil || !strings.Contains(out, "forbidden") {
		t.Errorf("beta's sessions --tenant acme: %v %s, want 403 forbidden", err, out)
	}
	if out, err := u.cairnAs(t, nil, "--token", keys["beta"], "--tenant", "Not/A", "sessions"); err == nil || !strings.Contains(out, "--tenant") {
		t.Errorf("--tenant Not/A: %v %s, want a usage error naming --tenant", err, out)
	}
}

// as sends one request with token and returns the status and body.
func (u *upProcess) as(t *testing.T, token, method, path string, body io.Reader) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, u.url+path, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// sseUntilLive opens an event stream with token and returns its status
// line and what it sends up to the ": live" comment that ends the stored
// events of a resumed stream.
func (u *upProcess) sseUntilLive(t *testing.T, token, path, lastEventID string) string {
	t.Helper()
	req, err := http.NewRequest("GET", u.url+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if lastEventID != "" {
		req.Header.Set("Last-Event-ID", lastEventID)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out := resp.Status + "\n"
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return out + string(b)
	}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if sc.Text() == ": live" {
			return out
		}
		out += sc.Text() + "\n"
	}
	t.Fatalf("stream %s ended before \": live\": %v\n%s", path, sc.Err(), out)
	return ""
}

// create1ForTenant is the id of the command that created session sid of
// token's tenant, read from the log (the gateway's export).
func create1ForTenant(t *testing.T, u *upProcess, token, sid string) string {
	t.Helper()
	code, body := u.as(t, token, "GET", "/v1/sessions/"+sid+"/export?format=jsonl", nil)
	if code != 200 {
		t.Fatalf("export of %s: %d %s", sid, code, body)
	}
	for l := range strings.Lines(body) {
		e, err := events.DecodeEntry([]byte(l))
		if err != nil {
			t.Fatalf("export of %s: %v", sid, err)
		}
		if e.Type == events.EntrySession {
			return e.CommandID
		}
	}
	t.Fatalf("session %s has no header: %s", sid, body)
	return ""
}

// promptIDForTenant is the command id of the first prompt of session sid
// of token's tenant, read from the log.
func promptIDForTenant(t *testing.T, u *upProcess, token, sid string) string {
	t.Helper()
	code, body := u.as(t, token, "GET", "/v1/sessions/"+sid+"/export?format=jsonl", nil)
	if code != 200 {
		t.Fatalf("export of %s: %d %s", sid, code, body)
	}
	for l := range strings.Lines(body) {
		e, err := events.DecodeEntry([]byte(l))
		if err != nil {
			t.Fatalf("export of %s: %v", sid, err)
		}
		if e.Type == events.EntryMessage && e.Message.Role == events.RoleUser && e.CommandID != "" {
			return e.CommandID
		}
	}
	t.Fatalf("session %s has no prompt: %s", sid, body)
	return ""
}
