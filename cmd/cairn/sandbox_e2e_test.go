package main

import (
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-agents/cairn/pkg/events"
)

// sandboxScript is a model one prompt injection away from an attacker:
// asked to "attack", it calls tools that try to read the system's and
// another session's files and to reach the platform's NATS server and
// gateway. The ports are in files the test puts in the session's workspace
// (ports are free ones, known only once `cairn up` runs).
const sandboxScript = `{
  "rules": [
    {"match": {"lastRole": "user", "contains": "plant the secret"},
     "reply": {"toolCalls": [{"id": "plant", "name": "write", "arguments": {"path": "secret.txt", "content": "VICTIM-SECRET"}}]}},
    {"match": {"lastRole": "user", "contains": "attack"},
     "reply": {"toolCalls": [
       {"id": "a-passwd", "name": "bash", "arguments": {"command": "cat /etc/passwd"}},
       {"id": "a-read-other", "name": "read", "arguments": {"path": "../vic/secret.txt"}},
       {"id": "a-cat-other", "name": "bash", "arguments": {"command": "cat ../vic/secret.txt"}},
       {"id": "a-nats", "name": "bash", "arguments": {"command": "exec 3<>/dev/tcp/127.0.0.1/$(cat nats.port) && head -c 200 <&3"}},
       {"id": "a-gateway", "name": "bash", "arguments": {"command": "curl -sS --max-time 5 http://127.0.0.1:$(cat gateway.port)/v1/sessions"}}
     ]}},
    {"match": {"lastRole": "user", "contains": "list files"}, "reply": {"toolCalls": [{"id": "ls", "name": "ls", "arguments": {"path": "."}}]}},
    {"match": {"lastRole": "toolResult", "tool": "ls"}, "reply": {"text": "I see the files."}},
    {"match": {"lastRole": "toolResult", "tool": "write"}, "reply": {"text": "planted"}},
    {"match": {"lastRole": "toolResult"}, "reply": {"text": "attacks answered"}},
    {"reply": {"text": "ok"}}
  ]
}`

// TestE2ESandboxStopsAnInjectedModel runs the attacks of issue 18 through
// the whole platform (`cairn up`, its embedded toolrunner at the default
// --sandbox required): a scripted model's tool calls are the attacks,
// prompted over the gateway. Each ends in an error result the model sees in
// the session's log, nothing leaks into it, the session goes on, and
// another session still works.
func TestE2ESandboxStopsAnInjectedModel(t *testing.T) {
	u := startUpWith(t, sandboxScript)
	root := filepath.Join(u.data, "workspaces", events.DefaultTenant) // root/<tenant>/<sid>
	// The gateway's /readyz reports the embedded toolrunner's sandbox level.
	if code, body := u.call(t, "GET", "/readyz", ""); code != http.StatusOK || body["ready"] != true || body["sandbox"] != "required" {
		t.Fatalf("/readyz under cairn up: %d %v, want 200 ready with sandbox required", code, body)
	}
	gw, err := url.Parse(u.url)
	if err != nil {
		t.Fatal(err)
	}
	natsURL, err := url.Parse(u.nats)
	if err != nil {
		t.Fatal(err)
	}

	// The victim session keeps a secret in its workspace, written by its own
	// (legit) tool call.
	newSandboxSession(t, u, "vic")
	promptSession(t, u, "vic", "p1", "plant the secret")
	u.waitEntries(t, "vic", "the secret planted", assistantSays("planted"))
	if b, err := os.ReadFile(filepath.Join(root, "vic", "secret.txt")); err != nil || string(b) != "VICTIM-SECRET" {
		t.Fatalf("the victim's write: %q, %v", b, err)
	}

	newSandboxSession(t, u, "atk")
	ws := filepath.Join(root, "atk")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, port := range map[string]string{"nats.port": natsURL.Port(), "gateway.port": gw.Port()} {
		if err := os.WriteFile(filepath.Join(ws, name), []byte(port), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	promptSession(t, u, "atk", "p1", "attack")
	es := u.waitEntries(t, "atk", "the attacks answered", assistantSays("attacks answered"))

	results := toolResults(es)
	for _, a := range []struct {
		id, what, want string // want: in the error result's text
	}{
		{"a-passwd", "bash reads /etc/passwd", "Permission denied"},
		{"a-read-other", "read opens another session's file", "escapes the workspace"},
		{"a-cat-other", "bash reads another session's file", "Permission denied"},
		{"a-nats", "bash connects to the embedded NATS server", "connect"},
		{"a-gateway", "curl reaches the gateway", "curl:"},
	} {
		m := results[a.id]
		if m == nil {
			t.Errorf("%s: no tool result in the log: %s", a.what, describeEntries(es))
			continue
		}
		text := m.Content.Text()
		t.Logf("%s: %s", a.what, strings.Join(strings.Fields(text), " "))
		if !m.IsError || !strings.Contains(text, a.want) {
			t.Errorf("%s: result (error %v) %q, want an error result containing %q", a.what, m.IsError, text, a.want)
		}
		for _, leak := range []string{"root:x:0:0", "VICTIM-SECRET", "INFO {", `"server_id"`, `"sessions"`} {
			if strings.Contains(text, leak) {
				t.Errorf("%s: the result leaks %q: %s", a.what, leak, text)
			}
		}
	}

	// The session goes on: its next prompt runs a tool in its workspace.
	promptSession(t, u, "atk", "p2", "please list files")
	es = u.waitEntries(t, "atk", "the listing after the attacks", assistantSays("I see the files."))
	if ls := toolResults(es)["ls"]; ls == nil || ls.IsError || !strings.Contains(ls.Content.Text(), "nats.port") {
		t.Errorf("ls after the attacks: %+v, want the workspace's files", ls)
	}

	// Another session still works, its secret where it was.
	promptSession(t, u, "vic", "p2", "please list files")
	es = u.waitEntries(t, "vic", "the victim's listing", assistantSays("I see the files."))
	if ls := toolResults(es)["ls"]; ls == nil || ls.IsError || !strings.Contains(ls.Content.Text(), "secret.txt") {
		t.Errorf("the victim's ls: %+v, want secret.txt", ls)
	}
}

func newSandboxSession(t *testing.T, u *upProcess, id string) {
	t.Helper()
	if code, out := u.call(t, "POST", "/v1/sessions?wait=applied", fmt.Sprintf(`{"id":%q}`, id)); code != 200 {
		t.Fatalf("create %s = %d %v", id, code, out)
	}
}

func promptSession(t *testing.T, u *upProcess, sid, id, text string) {
	t.Helper()
	body := fmt.Sprintf(`{"id":%q,"type":"prompt","text":%q}`, sid+"-"+id, text) // command ids are global
	if code, out := u.call(t, "POST", "/v1/sessions/"+sid+"/commands?wait=applied", body); code != 200 {
		t.Fatalf("prompt %s %q = %d %v", sid, text, code, out)
	}
}

// assistantSays holds once the log's last assistant message is text.
func assistantSays(text string) func([]events.Entry) bool {
	return func(es []events.Entry) bool {
		m := lastAssistant(es)
		return m != nil && m.Content.Text() == text
	}
}

// toolResults maps the log's tool results by tool call id, the last one of each.
func toolResults(es []events.Entry) map[string]*events.Message {
	out := map[string]*events.Message{}
	for _, e := range es {
		if m := e.Message; m != nil && m.Role == events.RoleToolResult {
			out[m.ToolCallID] = m
		}
	}
	return out
}
