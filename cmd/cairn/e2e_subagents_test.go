package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/cairn-agents/cairn/pkg/events"
)

const subagentE2EScript = `{
  "rules": [
    {"match": {"lastRole": "user", "contains": "child waits"}, "reply": {"delayMs": 600000, "text": "too late"}},
    {"match": {"lastRole": "user", "contains": "one slow task"},
     "reply": {"toolCalls": [{"id": "k1", "name": "task", "arguments": {"prompt": "child waits"}}]}},
    {"match": {"lastRole": "toolResult"}, "reply": {"text": "finished"}},
    {"reply": {"text": "ok"}}
  ]
}`

// launchUp runs `cairn up` over data directory dir (kept across runs) and
// waits until it serves; the caller stops it.
func launchUp(t *testing.T, dir string) (*upProcess, *bytes.Buffer) {
	t.Helper()
	script := filepath.Join(dir, "script.json")
	if err := os.WriteFile(script, []byte(subagentE2EScript), 0o644); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	cmd := exec.Command(cairnBinary(t), "up", "--data", data, "--http", "127.0.0.1:0",
		"--nats-listen", "127.0.0.1:0", "--script", script, "--model", "scripted/e2e")
	stdout, _ := cmd.StdoutPipe()
	stderr := new(bytes.Buffer)
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("cairn up printed nothing: %v\n%s", err, stderr.String())
	}
	_, rest, _ := strings.Cut(line, "API ")
	url, _, _ := strings.Cut(rest, ",")
	if !strings.HasPrefix(url, "http://") {
		t.Fatalf("unexpected first line %q", line)
	}
	return &upProcess{url: url, cmd: cmd, data: data}, stderr
}

// A kill -9 of the whole platform while a sub-agent's model call runs:
// on restart over the same data, the child's cut turn is closed, the
// parent hears of it and completes once, with one result for its task
// call, and the child was created once.
func TestE2ESubagentSurvivesKill9(t *testing.T) {
	dir := t.TempDir()
	u, _ := launchUp(t, dir)
	t.Cleanup(func() { // killed below; this is for a test that fails first
		_ = u.cmd.Process.Kill()
		_ = u.cmd.Wait()
	})
	if code, out := u.call(t, "POST", "/v1/sessions?wait=applied", `{"id":"par","tools":["task"]}`); code/100 != 2 {
		t.Fatalf("create: %d %v", code, out)
	}
	if code, out := u.call(t, "POST", "/v1/sessions/par/commands", `{"id":"go","type":"prompt","text":"one slow task"}`); code/100 != 2 {
		t.Fatalf("prompt: %d %v", code, out)
	}
	child := events.ChildSessionID("par", "k1")
	u.waitEntries(t, child, "the child's model call runs", hasCommand(events.TaskCommandID("prompt", child, "")))
	if err := u.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = u.cmd.Wait()

	u2, stderr := launchUp(t, dir)
	t.Cleanup(func() {
		if err := u2.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Errorf("signal cairn up: %v", err)
		}
		if err := u2.cmd.Wait(); err != nil {
			t.Errorf("cairn up exited with %v\n%s", err, stderr.String())
		}
		if permissionLines(stderr.String()) != "" {
			t.Errorf("a service of cairn up was refused a permission:\n%s", permissionLines(stderr.String()))
		}
	})
	// The tenant's limits, through the CLI.
	if out, err := exec.Command(cairnBinary(t), "--server", u2.url, "subagents", "set", "default", "--max-depth", "2").CombinedOutput(); err != nil {
		t.Fatalf("subagents set: %v %s", err, out)
	}
	if out, err := exec.Command(cairnBinary(t), "--server", u2.url, "subagents", "get", "default", "--json").CombinedOutput(); err != nil ||
		strings.TrimSpace(string(out)) != `{"maxDepth":2,"maxFanOut":20}` {
		t.Fatalf("subagents get: %v %s", err, out)
	}
	es := u2.waitEntries(t, "par", "the parent completes", func(es []events.Entry) bool {
		m := lastAssistant(es)
		return m != nil && m.StopReason == events.StopEnd
	})
	if got := lastAssistant(es).Content.Text(); got != "finished" {
		t.Fatalf("parent's reply %q", got)
	}
	var results []*events.Message
	for _, e := range es {
		if m := e.Message; e.Type == events.EntryMessage && m != nil && m.Role == events.RoleToolResult && m.ToolCallID == "k1" {
			results = append(results, m)
		}
	}
	if len(results) != 1 || !results[0].IsError || !strings.Contains(results[0].Content.Text(), "interrupted") {
		t.Fatalf("task call results %d (%s), want one error saying the child was interrupted", len(results), describeEntries(es))
	}
	assistants := 0
	for _, e := range es {
		if m := e.Message; e.Type == events.EntryMessage && m != nil && m.Role == events.RoleAssistant && m.StopReason == events.StopEnd {
			assistants++
		}
	}
	if assistants != 1 {
		t.Fatalf("the parent completed %d times: %s", assistants, describeEntries(es))
	}
	ces := u2.entries(t, child)
	creates, prompts := 0, 0
	for _, e := range ces {
		if e.Type == events.EntrySession {
			creates++
		}
		if m := e.Message; m != nil && m.Role == events.RoleUser {
			prompts++
		}
	}
	if creates != 1 || prompts != 1 || ces[0].ParentSession != "par" {
		t.Fatalf("child: %d headers, %d prompts, parent %q: %s", creates, prompts, ces[0].ParentSession, describeEntries(ces))
	}
}
