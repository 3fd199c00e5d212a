package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairn-agents/cairn/internal/kittest"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/nats-io/nats.go"
)

// First contact (issue 16): what a new user does on a fresh `cairn up`,
// with only CAIRN_SERVER set for the client.

// cairnClient runs the cairn binary as a client with only CAIRN_SERVER set.
func (u *upProcess) cairnClient(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(cairnBinary(t), args...)
	// The user's config directory is the one `cairn up` recorded its key in.
	cmd.Env = []string{"CAIRN_SERVER=" + u.url, "HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH"),
		"XDG_CONFIG_HOME=" + os.Getenv("XDG_CONFIG_HOME")}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// pollUntil calls cond every 10 ms until it holds, failing after 30 s with
// what cond last said.
func pollUntil(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	kittest.Eventually(t, 30*time.Second, what, func() error {
		if ok, last := cond(); !ok {
			return errors.New(last)
		}
		return nil
	})
}

func errorMessage(out map[string]any) string {
	e, _ := out["error"].(map[string]any)
	m, _ := e["message"].(string)
	return m
}

// Path 1: a workspace given as an absolute path inside the root works end
// to end; one outside the root is refused with the reason, at once by the
// gateway, and on the record by the orchestrator for a client that went
// around the gateway.
func TestE2EAbsoluteWorkspaceInsideTheRoot(t *testing.T) {
	u := startUp(t)
	root := filepath.Join(u.data, "workspaces")
	proj := filepath.Join(root, "default", "proj") // the default tenant's root
	if err := os.MkdirAll(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(proj, "marker.txt"), []byte("here"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := u.cairnClient(t, "session", "new", "--id", "w1", "--workspace", proj)
	if err != nil || strings.TrimSpace(out) != "w1" {
		t.Fatalf("session new --workspace %s: %v %s", proj, err, out)
	}
	if out, err := u.cairnClient(t, "prompt", "w1", "please list files"); err != nil || !strings.Contains(out, "I see the files.") {
		t.Fatalf("prompt: %v %s", err, out)
	}
	es := u.entries(t, "w1")
	if es[0].Type != events.EntrySession || es[0].Cwd != "proj" {
		t.Fatalf("session entry %+v: want the workspace recorded relative to the root (proj)", es[0])
	}
	var listed string
	for _, e := range es {
		if e.Message != nil && e.Message.Role == events.RoleToolResult {
			listed = e.Message.Content.Text()
		}
	}
	if !strings.Contains(listed, "marker.txt") {
		t.Fatalf("ls ran elsewhere than %s: %q", proj, listed)
	}

	// Outside the root: the gateway knows the root and refuses at once.
	code, resp := u.call(t, "POST", "/v1/sessions?wait=applied", fmt.Sprintf(`{"id":"w2","workspace":%q}`, t.TempDir()))
	if code != 400 || !strings.Contains(errorMessage(resp), "workspace:") || !strings.Contains(errorMessage(resp), "outside the tenant's workspace root") {
		t.Fatalf("create outside the root = %d %v", code, resp)
	}

	// A client that goes around the gateway (an operator on NATS, a
	// gateway run without --workspace-root) meets the orchestrator's check,
	// and the refusal is on the record although the session never existed.
	nc, err := nats.Connect(u.nats, u.natsOpts(t))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	cmd, _ := json.Marshal(events.Command{V: events.SchemaVersion, ID: "c-out", Type: events.CmdCreate, SessionID: "w3", Workspace: "/etc"})
	if err := nc.Publish(events.Names{}.CommandSubject(events.DefaultRef("w3")), cmd); err != nil {
		t.Fatal(err)
	}
	pollUntil(t, "the refused create reported", func() (bool, string) {
		code, st := u.call(t, "GET", "/v1/sessions/w3/commands/c-out", "")
		reason, _ := st["reason"].(string)
		return code == 200 && st["state"] == "rejected" && st["code"] == "invalid" &&
			strings.Contains(reason, `workspace: "/etc" is outside the tenant's workspace root`), fmt.Sprint(code, st)
	})

	// A create the orchestrator refuses, through the gateway: 409 with the
	// reason under ?wait=applied, and rejected in the command status.
	code, resp = u.call(t, "POST", "/v1/sessions?wait=applied", `{"id":"w4","commandId":"c-tool","tools":["no_such_tool"]}`)
	if code != 409 || resp["reason"] != "invalid" || !strings.Contains(errorMessage(resp), `"no_such_tool"`) {
		t.Fatalf("create with an unknown tool = %d %v", code, resp)
	}
	code, resp = u.call(t, "GET", "/v1/sessions/w4/commands/c-tool", "")
	if code != 200 || resp["state"] != "rejected" || !strings.Contains(fmt.Sprint(resp["reason"]), `"no_such_tool"`) {
		t.Fatalf("status of the refused create = %d %v", code, resp)
	}
	if code, _ := u.call(t, "GET", "/v1/sessions/w4/context", ""); code != 404 {
		t.Fatalf("the refused session exists: context = %d", code)
	}
}

const retryScript = `{
  "rules": [
    {"match": {"lastRole": "user", "contains": "flaky"}, "times": 1, "reply": {"delayMs": 100, "error": {"status": 529, "message": "overloaded_error"}}},
    {"reply": {"text": "ok"}}
  ]
}`

// Path 4: a session never reads idle while an automatic retry backs off:
// a client that waits for idle gets the reply, not the error before it.
func TestE2ENeverIdleWhileARetryBacksOff(t *testing.T) {
	u := startUpWith(t, retryScript)
	if code, out := u.call(t, "POST", "/v1/sessions?wait=applied", `{"id":"r1"}`); code != 200 {
		t.Fatalf("create = %d %v", code, out)
	}
	if code, out := u.call(t, "POST", "/v1/sessions/r1/commands?wait=applied", `{"id":"p1","type":"prompt","text":"flaky"}`); code != 200 {
		t.Fatalf("prompt = %d %v", code, out)
	}
	// A client's wait for the end of the run: the read model says idle, or
	// the command status says settled. Whichever it sees first, the log
	// must then hold the reply after the retry.
	how := waitRunEnd(t, u, "r1", "p1", 1)
	es := u.entries(t, "r1")
	if m := lastAssistant(es); m == nil || m.StopReason != events.StopEnd || m.Content.Text() != "ok" {
		t.Fatalf("%s while the log is %s: a client waiting for idle took the error as the end", how, describeEntries(es))
	}
	if got := describeEntries(es); !strings.Contains(got, "user:flaky | assistant: | assistant:ok") {
		t.Fatalf("log: %s", got)
	}
	if r := es[len(es)-2].Retry; r == nil || r.Attempt != 1 || r.Code != events.RetryTransient {
		t.Fatalf("the error message carries retry mark %+v", r)
	}
	_, sum := u.call(t, "GET", "/v1/sessions/r1", "")
	_, st := u.call(t, "GET", "/v1/sessions/r1/commands/p1", "")
	if sum["status"] != "idle" || st["state"] != "settled" {
		t.Fatalf("after the reply: session %v, prompt %v", sum["status"], st["state"])
	}
}

// The create and command routes against 15+ kinds of bad request: each is
// answered with a 4xx naming the field, or refused on the record with its
// reason, and nothing else reaches the log.
func TestE2EBadRequestsAreRefusedWithTheirReason(t *testing.T) {
	u := startUp(t)
	root := filepath.Join(u.data, "workspaces", "default") // the default tenant's root
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(t.TempDir(), filepath.Join(root, "out")); err != nil {
		t.Fatal(err)
	}
	if code, out := u.call(t, "POST", "/v1/sessions?wait=applied", `{"id":"b1"}`); code != 200 {
		t.Fatalf("create = %d %v", code, out)
	}
	before := u.entries(t, "b1")
	big := `{"type":"prompt","text":"` + strings.Repeat("x", 16<<20) + `"}`
	for _, c := range []struct {
		name, path, body string
		code             int
		want             string // in the error message
	}{
		{"bad session id", "/v1/sessions", `{"id":"no spaces"}`, 400, `id: session id "no spaces"`},
		{"bad JSON", "/v1/sessions", `{"id":`, 400, "invalid body"},
		{"two JSON values", "/v1/sessions", `{"id":"x1"} {"id":"x2"}`, 400, "one JSON object expected"},
		{"unknown field", "/v1/sessions", `{"colour":"blue"}`, 400, `unknown field "colour"`},
		{"wrong type", "/v1/sessions", `{"id":5}`, 400, "id: must be a string"},
		{"workspace outside the root", "/v1/sessions", `{"workspace":"/etc"}`, 400, `workspace: "/etc" is outside the tenant's workspace root`},
		{"workspace with ..", "/v1/sessions", `{"workspace":"../elsewhere"}`, 400, `workspace: "../elsewhere" is outside the tenant's workspace root`},
		{"workspace through a symlink out", "/v1/sessions", `{"workspace":"out/deeper"}`, 400, "workspace: \"out/deeper\" leads through a symlink"},
		{"model not provider/model", "/v1/sessions", `{"model":"gpt"}`, 400, "model: must be provider/model"},
		{"unknown model", "/v1/sessions", `{"model":"nope/x"}`, 400, `model: "nope/x" cannot be used`},
		{"bad command id", "/v1/sessions", `{"commandId":"a.b"}`, 400, "id: command id"},
		{"bad session id in the path", "/v1/sessions/a.b/commands", `{"type":"abort"}`, 400, "session id in path"},
		{"command not an object", "/v1/sessions/b1/commands", `[1]`, 400, "body must be a JSON object"},
		{"unknown command type", "/v1/sessions/b1/commands", `{"type":"fly"}`, 400, `type: unknown command type "fly"`},
		{"missing text", "/v1/sessions/b1/commands", `{"type":"prompt"}`, 400, "text: is required"},
		{"text of the wrong type", "/v1/sessions/b1/commands", `{"type":"prompt","text":5}`, 400, "text: must be a string"},
		{"bad whenBusy", "/v1/sessions/b1/commands", `{"type":"prompt","text":"hi","whenBusy":"later"}`, 400, `whenBusy: unknown policy "later"`},
		{"bad thinking level", "/v1/sessions/b1/commands", `{"type":"set_thinking_level","level":"max"}`, 400, `level: unknown thinking level "max"`},
		{"set_model to an unknown model", "/v1/sessions/b1/commands", `{"type":"set_model","model":"nope/x"}`, 400, `model: "nope/x" cannot be used`},
		{"navigate without entryId", "/v1/sessions/b1/commands", `{"type":"navigate"}`, 400, "entryId: is required"},
		{"oversize body", "/v1/sessions/b1/commands", big, 413, "over the limit"},
		{"unknown wait", "/v1/sessions/b1/commands?wait=soon", `{"type":"abort"}`, 400, `wait: unknown value "soon"`},
	} {
		code, out := u.call(t, "POST", c.path, c.body)
		if code != c.code || !strings.Contains(errorMessage(out), c.want) {
			t.Errorf("%s: %d %q, want %d naming %q", c.name, code, errorMessage(out), c.code, c.want)
		}
	}

	// Refused on the record: 409 with the reason, and rejected in the
	// command status, whether or not the session exists.
	for _, c := range []struct {
		name, sid, path, body, cid, code, want string
	}{
		{"navigate to an unknown entry", "b1", "/v1/sessions/b1/commands", `{"id":"n1","type":"navigate","entryId":"nope"}`, "n1", "invalid", `entryId: no entry "nope"`},
		{"create of an existing session", "b1", "/v1/sessions", `{"id":"b1","commandId":"c2"}`, "c2", "exists", "session b1 already exists"},
		{"prompt to a missing session", "ghost", "/v1/sessions/ghost/commands", `{"id":"g1","type":"prompt","text":"hi"}`, "g1", "no_session", "session ghost does not exist"},
		{"create with an unknown tool", "t1", "/v1/sessions", `{"id":"t1","commandId":"c3","tools":["no_such_tool"]}`, "c3", "invalid", `"no_such_tool" is not registered`},
	} {
		code, out := u.call(t, "POST", c.path+"?wait=applied", c.body)
		if code != 409 || out["reason"] != c.code || !strings.Contains(errorMessage(out), c.want) {
			t.Errorf("%s: %d %v, want 409 %s naming %q", c.name, code, out, c.code, c.want)
			continue
		}
		code, st := u.call(t, "GET", "/v1/sessions/"+c.sid+"/commands/"+c.cid, "")
		if code != 200 || st["state"] != "rejected" || st["code"] != c.code || !strings.Contains(fmt.Sprint(st["reason"]), c.want) {
			t.Errorf("%s: status %d %v", c.name, code, st)
		}
	}
	for _, sid := range []string{"ghost", "t1", "x1", "x2"} {
		if code, _ := u.call(t, "GET", "/v1/sessions/"+sid+"/context", ""); code != http.StatusNotFound {
			t.Errorf("session %s exists after a refused command: context = %d", sid, code)
		}
	}
	after := u.entries(t, "b1")
	var added []string
	for _, e := range after[min(len(before), len(after)):] {
		added = append(added, e.Type+":"+e.CommandID)
	}
	if len(after) != len(before)+2 || strings.Join(added, " ") != "command_rejected:n1 command_rejected:c2" {
		t.Fatalf("the log of b1 gained %v; want only the two refusals recorded (n1, c2)", added)
	}
	for i := range before {
		if before[i].ID != after[i].ID {
			t.Fatalf("entry %d changed: %s, was %s", i, after[i].ID, before[i].ID)
		}
	}
}

const compactAfterReplyScript = `{
  "defaults": {"contextWindow": 4000, "maxOutput": 1000},
  "rules": [
    {"match": {"contains": "<conversation>"}, "reply": {"delayMs": 300, "text": "## Goal\nanswer questions"}},
    {"match": {"lastRole": "user", "contains": "second"}, "reply": {"text": "big", "usage": {"input": 3500, "output": 10}}},
    {"reply": {"text": "ok", "usage": {"input": 100, "output": 10}}}
  ]
}`

// A session never reads idle while the compaction after a run's last reply
// runs: a client that waits for idle (or settled) finds the compaction
// entry in the log, and is not refused as busy when it prompts again.
func TestE2ENeverIdleWhileTheLastReplyIsCompacted(t *testing.T) {
	u := startUpWith(t, compactAfterReplyScript)
	if code, out := u.call(t, "POST", "/v1/sessions?wait=applied", `{"id":"k1"}`); code != 200 {
		t.Fatalf("create = %d %v", code, out)
	}
	// Two long first runs: the compaction keeps the newer (the keep-recent
	// budget) and has the older to summarize.
	long := strings.Repeat("an earlier question, at length. ", 200)
	for _, id := range []string{"p0", "p1"} {
		if code, out := u.call(t, "POST", "/v1/sessions/k1/commands?wait=applied", `{"id":"`+id+`","type":"prompt","text":"`+long+`"}`); code != 200 {
			t.Fatalf("prompt = %d %v", code, out)
		}
		pollUntil(t, "an earlier run settled", func() (bool, string) {
			_, st := u.call(t, "GET", "/v1/sessions/k1/commands/"+id, "")
			return st["state"] == "settled", fmt.Sprint(st)
		})
	}
	if code, out := u.call(t, "POST", "/v1/sessions/k1/commands?wait=applied", `{"id":"p2","type":"prompt","text":"second"}`); code != 200 {
		t.Fatalf("prompt = %d %v", code, out)
	}
	how := waitRunEnd(t, u, "k1", "p2", 6)
	es := u.entries(t, "k1")
	last := es[len(es)-1]
	if last.Type != events.EntryCompaction {
		t.Fatalf("%s while the log is %s: the compaction after the reply had not landed (%s)", how, describeEntries(es), last.Reason)
	}
	if r := es[len(es)-2].Retry; r == nil || r.Code != events.RetryCompaction {
		t.Fatalf("the reply before the compaction carries mark %+v (log %s)", r, describeEntries(es))
	}
	_, st := u.call(t, "GET", "/v1/sessions/k1/commands/p2", "")
	if m, _ := st["message"].(map[string]any); st["state"] != "settled" || m == nil {
		t.Fatalf("after the compaction: prompt %v", st)
	}
	if code, out := u.call(t, "POST", "/v1/sessions/k1/commands?wait=applied", `{"id":"p3","type":"prompt","text":"third"}`); code != 200 {
		t.Fatalf("a prompt once idle = %d %v", code, out)
	}
}

// waitRunEnd waits as a client waits for the end of command cid's run in
// session sid: until the read model says idle (with at least minMessages
// messages, so the session's creation alone does not count) or the command
// status says settled, and says which it saw first.
func waitRunEnd(t *testing.T, u *upProcess, sid, cid string, minMessages float64) string {
	t.Helper()
	var how string
	pollUntil(t, "the run of "+cid+" settled", func() (bool, string) {
		_, sum := u.call(t, "GET", "/v1/sessions/"+sid, "")
		_, st := u.call(t, "GET", "/v1/sessions/"+sid+"/commands/"+cid, "")
		msgs, _ := sum["messages"].(float64)
		switch {
		case msgs >= minMessages && sum["status"] == "idle":
			how = "the session read idle"
		case st["state"] == "settled":
			how = "the prompt read settled"
		default:
			return false, fmt.Sprint(sum["status"], " ", st["state"])
		}
		return true, how
	})
	return how
}
