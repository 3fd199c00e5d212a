package main

import (
	"bufio"
	"bytes"
	"fmt"
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
	"github.com/cairn-agents/cairn/pkg/provision"
	"github.com/nats-io/nats.go"
)

var (
	policyextOnce sync.Once
	policyextPath string
	policyextErr  error
)

// policyextBinary builds examples/policyext once.
func policyextBinary(t *testing.T) string {
	t.Helper()
	policyextOnce.Do(func() {
		dir, err := os.MkdirTemp("", "cairn-policyext-bin-")
		if err != nil {
			policyextErr = err
			return
		}
		policyextPath = filepath.Join(dir, "policyext")
		out, err := exec.Command("go", "build", "-race", "-o", policyextPath, "../../examples/policyext").CombinedOutput()
		if err != nil {
			policyextErr = err
			policyextPath = string(out)
		}
	})
	if policyextErr != nil {
		t.Fatalf("build examples/policyext: %v\n%s", policyextErr, policyextPath)
	}
	return policyextPath
}

const extensionScript = `{
  "rules": [
    {"match": {"lastRole": "user", "contains": "danger"}, "reply": {"toolCalls": [{"name": "bash", "arguments": {"command": "rm -rf ./scratch; echo removed"}}]}},
    {"match": {"lastRole": "user", "contains": "leak"}, "reply": {"toolCalls": [{"name": "bash", "arguments": {"command": "echo the password is hunter2"}}]}},
    {"match": {"lastRole": "user", "contains": "note outside"}, "reply": {"toolCalls": [{"name": "write", "arguments": {"path": "notes.txt", "content": "outside"}}]}},
    {"match": {"lastRole": "user", "contains": "note inside"}, "reply": {"toolCalls": [{"name": "write", "arguments": {"path": "src/notes.txt", "content": "inside"}}]}},
    {"match": {"lastRole": "toolResult", "tool": "bash"}, "reply": {"text": "done"}},
    {"match": {"lastRole": "toolResult", "tool": "write"}, "reply": {"text": "done"}},
    {"reply": {"text": "ok"}}
  ]
}`

// startPolicyext runs the example extension against u as the extension
// NATS user and waits until its handlers are registered.
func startPolicyext(t *testing.T, u *upProcess, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(policyextBinary(t), append([]string{"--nats", u.nats,
		"--seed", filepath.Join(u.data, "credentials", "extension.nk")}, args...)...)
	stdout, _ := cmd.StdoutPipe()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || strings.TrimSpace(line) != "policyext ready" {
		t.Fatalf("policyext did not start: %q %v\n%s", line, err, stderr.String())
	}
	return cmd
}

// toolResult returns the session's last tool result.
// afterCommand is what follows the first entry of command id, or nothing.
func afterCommand(es []events.Entry, id string) []events.Entry {
	for i, e := range es {
		if e.CommandID == id {
			return es[i+1:]
		}
	}
	return nil
}

func lastToolResult(es []events.Entry) *events.Message {
	for i := len(es) - 1; i >= 0; i-- {
		if m := es[i].Message; m != nil && m.Role == events.RoleToolResult {
			return m
		}
	}
	return nil
}

// A policy service in its own process, as the extension NATS user, vetoes
// and patches the tool calls of a real platform's agents; killed (its
// registrations left behind), its fail-closed handler keeps blocking, and
// the run still ends.
func TestE2EPolicyExtensionBlocksAndPatches(t *testing.T) {
	u := startUpWith(t, extensionScript)
	ext := startPolicyext(t, u, "--redact", "hunter2")
	u.waitHandlers(t, 2) // the orchestrator's watch has both registrations
	// Lifecycle notices, heard as the extension user.
	seed, err := nats.NkeyOptionFromSeed(filepath.Join(u.data, "credentials", "extension.nk"))
	if err != nil {
		t.Fatal(err)
	}
	nc, err := nats.Connect(u.nats, seed, nats.CustomInboxPrefix(provision.User{Role: provision.RoleExtension}.InboxPrefix()))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	notices, err := nc.SubscribeSync(events.Names{}.TenantExtensionNotices(events.DefaultTenant))
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	prompt := func(sid, cmdID, text string) *events.Message {
		t.Helper()
		if code, out := u.call(t, "POST", "/v1/sessions/"+sid+"/commands?wait=applied", `{"id":"`+cmdID+`","type":"prompt","text":"`+text+`"}`); code != 200 {
			t.Fatalf("prompt = %d %v", code, out)
		}
		// Only what follows the command's own entry belongs to its run.
		var run []events.Entry
		u.waitEntries(t, sid, "the run of "+cmdID+" ends", func(es []events.Entry) bool {
			run = afterCommand(es, cmdID)
			m := lastAssistant(run)
			return m != nil && m.Content.Text() == "done" && lastToolResult(run) != nil
		})
		return lastToolResult(run)
	}
	for i, sid := range []string{"x1", "x2", "x3"} {
		if code, out := u.call(t, "POST", "/v1/sessions?wait=applied", `{"id":"`+sid+`"}`); code != 200 {
			t.Fatalf("create %d = %d %v", i, code, out)
		}
	}
	// Each session's actor sends its session_start after the create is
	// applied, so the three may arrive in any order.
	want := map[string]bool{}
	for _, sid := range []string{"x1", "x2", "x3"} {
		want[(events.Names{}).ExtensionNoticeSubject(events.DefaultRef(sid), events.NoticeSessionStart)] = true
	}
	for range 3 {
		m, err := notices.NextMsg(30 * time.Second)
		if err != nil {
			t.Fatalf("no lifecycle notice: %v", err)
		}
		if !want[m.Subject] {
			t.Fatalf("a notice on %s, want the session_start of x1, x2 and x3 once each", m.Subject)
		}
		delete(want, m.Subject)
	}
	res := prompt("x1", "p1", "danger")
	if !res.IsError || !strings.Contains(res.Content.Text(), "rm -rf` is not allowed") {
		t.Fatalf("rm -rf ran past the policy: error %v, %q", res.IsError, res.Content.Text())
	}
	res = prompt("x1", "p2", "leak")
	if res.IsError || !strings.Contains(res.Content.Text(), "the password is [redacted]") || strings.Contains(res.Content.Text(), "hunter2") {
		t.Fatalf("the result was not redacted: %q", res.Content.Text())
	}

	// approval "ask": a write inside src/ runs at once; one outside parks
	// with an approval_requested entry and runs after approve.
	res = prompt("x1", "p-in", "note inside")
	if res.IsError {
		t.Fatalf("a write inside src/ did not run: %q", res.Content.Text())
	}
	if es := afterCommand(u.entries(t, "x1"), "p-in"); entryOfType(es, events.EntryApprovalRequested) != nil {
		t.Fatalf("a write inside src/ asked for approval: %s", describeEntries(es))
	}
	if code, out := u.call(t, "POST", "/v1/sessions/x1/commands?wait=applied", `{"id":"p-out","type":"prompt","text":"note outside"}`); code != 200 {
		t.Fatalf("prompt = %d %v", code, out)
	}
	var asked *events.Entry
	u.waitEntries(t, "x1", "the write outside src/ parks", func(es []events.Entry) bool {
		asked = entryOfType(afterCommand(es, "p-out"), events.EntryApprovalRequested)
		return asked != nil
	})
	if asked.ToolName != "write" || !strings.Contains(string(asked.Arguments), `"notes.txt"`) {
		t.Fatalf("the approval asks for %s %s, want the write of notes.txt", asked.ToolName, asked.Arguments)
	}
	if code, out := u.call(t, "GET", "/v1/sessions/x1", ""); code != 200 || out["status"] != "waiting" {
		t.Fatalf("the parked session: %d %v, want status waiting", code, out)
	}
	if code, out := u.call(t, "POST", "/v1/sessions/x1/commands?wait=applied", `{"id":"a-out","type":"approve","toolCallId":"`+asked.ToolCallID+`"}`); code != 200 {
		t.Fatalf("approve = %d %v", code, out)
	}
	var run []events.Entry
	u.waitEntries(t, "x1", "the approved write runs", func(es []events.Entry) bool {
		run = afterCommand(es, "p-out")
		m := lastAssistant(run)
		return m != nil && m.Content.Text() == "done" && lastToolResult(run) != nil
	})
	if res := lastToolResult(run); res.IsError {
		t.Fatalf("the approved write failed: %q", res.Content.Text())
	}
	if a := entryOfType(run, events.EntryApprovalAnswered); a == nil || a.Decision != events.DecisionApprove {
		t.Fatalf("no approve answer in the run: %s", describeEntries(run))
	}

	// kill -9: the registrations stay, nobody answers; fail closed blocks.
	if err := ext.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = ext.Wait()
	res = prompt("x2", "p3", "danger")
	if !res.IsError || !strings.Contains(res.Content.Text(), "policyext-tool-call") {
		t.Fatalf("with the policy service dead the call was not blocked by its fail-closed handler: %q", res.Content.Text())
	}

	// Restarted and stopped gracefully: it unregisters, and calls run.
	ext = startPolicyext(t, u, "--redact", "hunter2")
	if err := ext.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := ext.Wait(); err != nil {
		t.Fatalf("policyext exited with %v", err)
	}
	u.waitHandlers(t, 0)
	if res := prompt("x3", "p4", "danger"); res.IsError {
		t.Fatalf("unregistered, the policy still blocked: %q", res.Content.Text())
	}
}

// waitHandlers polls /metrics until the orchestrator has n extension
// handlers in force.
func (u *upProcess) waitHandlers(t *testing.T, n int) {
	t.Helper()
	want := fmt.Sprintf("cairn_extension_handlers %d\n", n)
	kittest.Eventually(t, 30*time.Second, want, func() error {
		code, body := u.get(t, "/metrics")
		if code != 200 || !strings.Contains(body, want) {
			return fmt.Errorf("status %d; want %q in /metrics", code, want)
		}
		return nil
	})
}

// entryOfType returns the first entry of type typ in es, or nil.
func entryOfType(es []events.Entry, typ string) *events.Entry {
	for i := range es {
		if es[i].Type == typ {
			return &es[i]
		}
	}
	return nil
}
