package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cairn-agents/cairn/internal/kittest"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/nats-io/nats.go"
)

// The end-to-end tests run the real binary: `go build` once, then `cairn up`
// as a process, driven over HTTP and by `cairn` client processes.

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

func cairnBinary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "cairn-e2e-bin-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "cairn")
		out, err := exec.Command("go", "build", "-race", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

const e2eScript = `{
  "rules": [
    {"match": {"lastRole": "user", "contains": "list files"}, "reply": {"toolCalls": [{"name": "ls", "arguments": {"path": "."}}]}},
    {"match": {"lastRole": "toolResult", "tool": "ls"}, "reply": {"text": "I see the files."}},
    {"match": {"lastRole": "user", "contains": "slow tool"}, "reply": {"toolCalls": [{"name": "bash", "arguments": {"command": "sleep 1; echo slept"}}]}},
    {"match": {"lastRole": "user", "contains": "steer me"}, "reply": {"text": "steered"}},
    {"match": {"lastRole": "toolResult", "tool": "bash"}, "reply": {"text": "tool finished"}},
    {"match": {"lastRole": "user", "contains": "wait long"}, "reply": {"delayMs": 60000, "text": "too late"}},
    {"reply": {"text": "ok"}}
  ]
}`

type upProcess struct {
	url   string
	cmd   *exec.Cmd
	data  string // its --data directory
	nats  string // its embedded NATS server's client URL
	creds string // the admin's credentials file
}

// natsOpts are the options that connect to u's NATS as the admin.
func (u *upProcess) natsOpts(t *testing.T) nats.Option {
	t.Helper()
	o, err := nats.NkeyOptionFromSeed(u.creds)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// startUp runs `cairn up` on free ports and waits until it serves.
func startUp(t *testing.T) *upProcess {
	t.Helper()
	return startUpWith(t, e2eScript)
}

// startUpWith is startUp with the scripted model's script.
func startUpWith(t testing.TB, scriptJSON string) *upProcess {
	t.Helper()
	bin := cairnBinary(t)
	dir := t.TempDir()
	script := filepath.Join(dir, "script.json")
	if err := os.WriteFile(script, []byte(scriptJSON), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "up", "--data", filepath.Join(dir, "data"), "--http", "127.0.0.1:0",
		"--nats-listen", "127.0.0.1:0", "--script", script, "--model", "scripted/e2e")
	stdout, _ := cmd.StdoutPipe()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Errorf("signal cairn up: %v", err)
		}
		if err := cmd.Wait(); err != nil {
			t.Errorf("cairn up exited with %v\n%s", err, stderr.String())
		}
		// Every service works as its own NATS user: the server refused
		// nothing it did.
		if permissionLines(stderr.String()) != "" {
			t.Errorf("a service of cairn up was refused a permission:\n%s", permissionLines(stderr.String()))
		}
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("cairn up printed nothing: %v\n%s", err, stderr.String())
	}
	// "cairn is up: API http://127.0.0.1:PORT, NATS ..."
	_, rest, _ := strings.Cut(line, "API ")
	url, _, _ := strings.Cut(rest, ",")
	_, rest, _ = strings.Cut(rest, "NATS ")
	natsURL, _, _ := strings.Cut(rest, ",")
	_, creds, _ := strings.Cut(strings.TrimSpace(rest), "admin credentials ")
	if !strings.HasPrefix(url, "http://") || !strings.HasPrefix(natsURL, "nats://") || creds == "" {
		t.Fatalf("unexpected first line %q", line)
	}
	return &upProcess{url: url, cmd: cmd, data: filepath.Join(dir, "data"), nats: natsURL, creds: creds}
}

// permissionLines are the lines of log that tell of a refused permission:
// the server's ("Publish Violation", "Subscription Violation") and the
// client's ("permissions violation").
func permissionLines(log string) string {
	var out []string
	for l := range strings.Lines(log) {
		if strings.Contains(l, " Violation") || strings.Contains(strings.ToLower(l), "permissions violation") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "")
}

func (u *upProcess) call(t *testing.T, method, path, body string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(method, u.url+path, strings.NewReader(body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatalf("%s %s: the answer is not JSON: %v: %s", method, path, err, data)
	}
	return resp.StatusCode, out
}

// entries returns the session's log through the gateway's export. A read
// the gateway could not serve (503 under load) is retried until a deadline.
func (u *upProcess) entries(t *testing.T, sid string) []events.Entry {
	t.Helper()
	var es []events.Entry
	kittest.Eventually(t, 30*time.Second, "export of "+sid, func() (err error) {
		es, err = u.tryEntries(sid)
		return err
	})
	return es
}

func (u *upProcess) tryEntries(sid string) ([]events.Entry, error) {
	resp, err := http.Get(u.url + "/v1/sessions/" + sid + "/export?format=jsonl")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		body, _ := io.ReadAll(resp.Body)
		return nil, fmt.Errorf("status %d: %s", resp.StatusCode, body)
	}
	var es []events.Entry
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		e, err := events.DecodeEntry(sc.Bytes())
		if err != nil {
			return nil, fmt.Errorf("exported entry: %w", err)
		}
		es = append(es, e)
	}
	return es, sc.Err()
}

// waitEntries polls the log until cond holds.
func (u *upProcess) waitEntries(t *testing.T, sid, what string, cond func([]events.Entry) bool) []events.Entry {
	t.Helper()
	var es []events.Entry
	kittest.Eventually(t, 30*time.Second, what, func() error {
		if es = u.entries(t, sid); cond(es) {
			return nil
		}
		return fmt.Errorf("log: %s", describeEntries(es))
	})
	return es
}

// describeEntries renders the log's entries as type or role:text, leaving
// out the system prompt records (events.CustomSystemPrompt), which the
// tests of the conversation's flow do not look at.
func describeEntries(es []events.Entry) string {
	var parts []string
	for _, e := range withoutPromptRecords(es) {
		d := e.Type
		if e.Message != nil {
			d = e.Message.Role + ":" + firstLine(e.Message.Content.Text(), 30)
		}
		parts = append(parts, d)
	}
	return strings.Join(parts, " | ")
}

// withoutPromptRecords is es without the system prompt records.
func withoutPromptRecords(es []events.Entry) []events.Entry {
	out := make([]events.Entry, 0, len(es))
	for _, e := range es {
		if e.CustomType != events.CustomSystemPrompt {
			out = append(out, e)
		}
	}
	return out
}

// waitAgentEndAfter waits for the agent_end of the run that replied
// reply. A session is idle once its run's agent_end is out, not when its
// last entry is: a prompt sent upon the entry may be refused as busy.
func (u *upProcess) waitAgentEndAfter(t *testing.T, sid, reply string) {
	t.Helper()
	u.events(t, sid, func(evs []events.Event) bool {
		at := -1
		for i, ev := range evs {
			if ev.Type == events.EvMessageEnd && ev.Message != nil && ev.Message.Role == events.RoleAssistant && ev.Message.Content.Text() == reply {
				at = i
			}
		}
		return at >= 0 && len(ofType(evs[at:], events.EvAgentEnd)) > 0
	})
}

// describeCommands is describeEntries with the command each entry names.
func describeCommands(es []events.Entry) string {
	var parts []string
	for _, e := range es {
		d := e.Type
		if e.Message != nil {
			d = e.Message.Role + ":" + firstLine(e.Message.Content.Text(), 30)
			if e.Message.StopReason != "" {
				d += "(" + string(e.Message.StopReason) + ")"
			}
		}
		if e.CommandID != "" {
			d += "[" + e.CommandID + "]"
		}
		parts = append(parts, d)
	}
	return strings.Join(parts, " | ")
}

func hasCommand(id string) func([]events.Entry) bool {
	return func(es []events.Entry) bool {
		for _, e := range es {
			if e.CommandID == id {
				return true
			}
		}
		return false
	}
}

func lastAssistant(es []events.Entry) *events.Message {
	for i := len(es) - 1; i >= 0; i-- {
		if m := es[i].Message; m != nil && m.Role == events.RoleAssistant {
			return m
		}
	}
	return nil
}

func TestE2EPromptToolsAnswerWithTheCLI(t *testing.T) {
	u := startUp(t)
	bin := cairnBinary(t)
	out, err := exec.Command(bin, "--server", u.url, "session", "new", "--id", "e1").CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "e1" {
		t.Fatalf("session new: %v %s", err, out)
	}
	out, err = exec.Command(bin, "--server", u.url, "prompt", "e1", "please list files").CombinedOutput()
	if err != nil {
		t.Fatalf("prompt: %v %s", err, out)
	}
	for _, want := range []string{"→ ls", "← ls ok", "I see the files."} {
		if !strings.Contains(string(out), want) {
			t.Errorf("prompt output lacks %q:\n%s", want, out)
		}
	}
	es := u.entries(t, "e1")
	if got := describeEntries(es); !strings.HasPrefix(got, "session | user:please list files | assistant: | toolResult:") || lastAssistant(es).Content.Text() != "I see the files." {
		t.Fatalf("log: %s", got)
	}
}

func TestE2ESteerAbortAndBusyPolicies(t *testing.T) {
	u := startUp(t)
	post := func(sid, body string) (int, map[string]any) {
		return u.call(t, "POST", "/v1/sessions/"+sid+"/commands?wait=applied", body)
	}
	if code, out := u.call(t, "POST", "/v1/sessions?wait=applied", `{"id":"e2"}`); code != 200 {
		t.Fatalf("create = %d %v", code, out)
	}

	// Steering while a tool runs: delivered after the tool, before the next model call.
	post("e2", `{"id":"p1","type":"prompt","text":"slow tool"}`)
	u.waitEntries(t, "e2", "tool call recorded", func(es []events.Entry) bool {
		m := lastAssistant(es)
		return m != nil && len(m.ToolCalls()) == 1
	})
	if code, out := u.call(t, "POST", "/v1/sessions/e2/commands", `{"id":"s1","type":"steer","text":"steer me"}`); code != 202 {
		t.Fatalf("steer = %d %v", code, out)
	}
	es := u.waitEntries(t, "e2", "steered reply", func(es []events.Entry) bool {
		m := lastAssistant(es)
		return m != nil && m.Content.Text() == "steered"
	})
	if got := describeEntries(es); !strings.Contains(got, "toolResult:slept | user:steer me | assistant:steered") {
		t.Fatalf("steering not after the tool result: %s", got)
	}

	u.waitAgentEndAfter(t, "e2", "steered")

	// Busy policies while a reply takes long.
	if code, out := post("e2", `{"id":"p2","type":"prompt","text":"wait long"}`); code != 200 {
		t.Fatalf("p2 = %d %v", code, out)
	}
	if code, out := post("e2", `{"id":"p3","type":"prompt","text":"hello"}`); code != 409 || out["reason"] != "busy" {
		t.Fatalf("reject policy = %d %v", code, out)
	}
	if code, out := u.call(t, "POST", "/v1/sessions/e2/commands", `{"id":"p4","type":"prompt","text":"later","whenBusy":"follow_up"}`); code != 202 {
		t.Fatalf("follow_up policy = %d %v", code, out)
	}
	// interrupt: aborts the long reply (which clears the queued follow-up) and runs this one.
	if code, out := post("e2", `{"id":"p5","type":"prompt","text":"instead","whenBusy":"interrupt"}`); code != 200 {
		t.Fatalf("interrupt policy = %d %v", code, out)
	}
	es = u.waitEntries(t, "e2", "interrupting prompt answered", func(es []events.Entry) bool {
		return hasCommand("p4")(es) && lastAssistant(es) != nil && lastAssistant(es).Content.Text() == "ok"
	})
	var sawAborted bool
	for _, e := range es {
		if e.Message != nil && e.Message.StopReason == events.StopAborted {
			sawAborted = true
		}
		if e.CommandID == "p4" && (e.Type != events.EntryCommandRejected || e.Code != "cleared_by_abort") {
			t.Errorf("queued follow-up recorded as %+v, want cleared by the abort", e)
		}
	}
	if !sawAborted {
		t.Errorf("no aborted reply after interrupt: %s", describeEntries(es))
	}
	u.waitAgentEndAfter(t, "e2", "ok")

	// Abort by command; steer policy while busy.
	if code, out := post("e2", `{"id":"p6","type":"prompt","text":"wait long"}`); code != 200 {
		t.Fatalf("p6 = %d %v", code, out)
	}
	if code, out := u.call(t, "POST", "/v1/sessions/e2/commands", `{"id":"p7","type":"prompt","text":"steer me","whenBusy":"steer"}`); code != 202 {
		t.Fatalf("steer policy = %d %v", code, out)
	}
	if code, out := post("e2", `{"id":"a1","type":"abort"}`); code != 200 {
		t.Fatalf("abort = %d %v\nlog: %s", code, out, describeCommands(u.entries(t, "e2")))
	}
	es = u.waitEntries(t, "e2", "abort and cleared steer recorded", hasCommand("p7"))
	for _, e := range es {
		if e.CommandID == "a1" && (e.Message == nil || e.Message.StopReason != events.StopAborted) {
			t.Errorf("abort applied as %+v", e)
		}
	}
}

func TestE2EBadRequestsChangeNothing(t *testing.T) {
	u := startUp(t)
	if code, _ := u.call(t, "POST", "/v1/sessions?wait=applied", `{"id":"e3"}`); code != 200 {
		t.Fatal("create failed")
	}
	before := len(u.entries(t, "e3"))
	for _, c := range []struct{ method, path, body, want string }{
		{"POST", "/v1/sessions", `{"id":"no spaces"}`, "session id"},
		{"POST", "/v1/sessions", `{"model":"gpt"}`, "provider/model"},
		{"POST", "/v1/sessions", `not json`, "invalid body"},
		{"POST", "/v1/sessions/e3/commands", `{"type":"prompt"}`, "text: is required"},
		{"POST", "/v1/sessions/e3/commands", `{"type":"fly"}`, `unknown command type "fly"`},
		{"POST", "/v1/sessions/e3/commands", `{"type":"set_thinking_level","level":"max"}`, `unknown thinking level "max"`},
		{"POST", "/v1/sessions/e3/commands", `{"type":"navigate"}`, "entryId: is required"},
		{"POST", "/v1/sessions/e3/commands", `{"type":"prompt","text":"x","images":[{"data":"AA==","mimeType":"text/plain"}]}`, "images[0].mimeType"},
		{"POST", "/v1/sessions/e3/commands", `{"type":"abort","sessionId":"e4"}`, "does not match"},
		{"POST", "/v1/sessions/e%2F3/commands", `{"type":"abort"}`, "session id in path"},
		{"GET", "/v1/sessions/e3/events?after=-1", ``, "after: must be an event id"},
		{"GET", "/v1/sessions/e3/context?leaf=zz", ``, `leaf: no entry "zz"`},
		{"GET", "/v1/sessions?limit=0", ``, "limit"},
	} {
		code, out := u.call(t, c.method, c.path, c.body)
		e, _ := out["error"].(map[string]any)
		msg, _ := e["message"].(string)
		if code < 400 || code > 499 || !strings.Contains(msg, c.want) {
			t.Errorf("%s %s %s = %d %q, want a 4xx naming %q", c.method, c.path, c.body, code, msg, c.want)
		}
	}
	if after := len(u.entries(t, "e3")); after != before {
		t.Fatalf("bad requests changed the log: %d entries, was %d", after, before)
	}
}
