package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cairn-agents/cairn/pkg/events"
)

const approvalsE2EScript = `{
  "rules": [
    {"match": {"lastRole": "user", "contains": "clean up"},
     "reply": {"toolCalls": [
       {"id": "k1", "name": "bash", "arguments": {"command": "echo one"}},
       {"id": "k2", "name": "bash", "arguments": {"command": "echo two"}}]}},
    {"match": {"lastRole": "toolResult"}, "reply": {"text": "cleaned"}},
    {"reply": {"text": "ok"}}
  ]
}`

// startCLI starts the binary as u.cli does and returns it with its stdout
// as a channel of lines (closed at exit) and its stderr.
func (u *upProcess) startCLI(t *testing.T, args ...string) (*exec.Cmd, <-chan string, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(cairnBinary(t), args...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "CAIRN_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "CAIRN_SERVER="+u.url, "CAIRN_NATS_CREDS="+u.creds)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 256)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return cmd, lines, &stderr
}

// waitLine reads lines until one holds every want; it returns the lines
// read.
func waitLine(t *testing.T, lines <-chan string, what string, want ...string) []string {
	t.Helper()
	var got []string
	deadline := time.After(60 * time.Second)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("%s: the output ended:\n%s", what, strings.Join(got, "\n"))
			}
			got = append(got, l)
			all := true
			for _, w := range want {
				all = all && strings.Contains(l, w)
			}
			if all {
				return got
			}
		case <-deadline:
			t.Fatalf("%s: no line with %q in:\n%s", what, want, strings.Join(got, "\n"))
		}
	}
}

// The approvals CLI against a real platform (DESIGN §11): a session made
// with --ask parks both bash calls of a batch; `cairn prompt` follows the
// session's event stream and prints each request with how to answer it
// and each answer; `cairn approvals` lists the pending calls as a table
// and `--watch` follows them as they are answered; `cairn approve` with
// edited arguments and `cairn deny --reason` answer them, a second answer
// and a deny without a reason are refused, and the run goes on.
func TestE2EApprovalsWithTheCLI(t *testing.T) {
	u := startUpWith(t, approvalsE2EScript)
	u.mustCLI(t, "session", "new", "--id", "ap", "--ask", "bash")
	prompt, promptOut, promptErr := u.startCLI(t, "prompt", "ap", "please clean up")

	waitLine(t, promptOut, "the first request", "bash", "waits for approval: cairn approve ap k1")
	waitLine(t, promptOut, "the second request", "waits for approval: cairn approve ap k2")
	table := u.eventuallyCLI(t, func(s string) bool { return strings.Count(s, "pending") == 2 }, "approvals")
	if !strings.HasPrefix(table, "SESSION") || !strings.Contains(table, "ap ") || !strings.Contains(table, "k1") ||
		!strings.Contains(table, `{"command":"echo two"}`) {
		t.Fatalf("cairn approvals:\n%s", table)
	}
	u.eventuallyCLI(t, func(s string) bool { return strings.Contains(s, "\nap ") && strings.Contains(s, " waiting ") }, "sessions")
	watch, watchOut, _ := u.startCLI(t, "approvals", "--status", "all", "--watch")
	waitLine(t, watchOut, "the watch lists k1 pending", "k1", "pending")

	if out := u.mustCLI(t, "approve", "ap", "k2", "--args", `{"command":"echo edited"}`); strings.TrimSpace(out) == "" {
		t.Fatal("approve printed no command id")
	}
	waitLine(t, promptOut, "the answer is followed", "k2 approve by")
	waitLine(t, watchOut, "the watch shows k2 approved", "k2", "approved", "(edited)")
	if code, _, errOut := u.cli(t, "approve", "ap", "k2"); code != 1 || !strings.Contains(errOut, "already answered") {
		t.Fatalf("a second answer: exit %d %q, want refused as already answered", code, errOut)
	}
	if code, _, errOut := u.cli(t, "deny", "ap", "k1"); code != 2 || !strings.Contains(errOut, "--reason is required") {
		t.Fatalf("deny without a reason: exit %d %q", code, errOut)
	}
	if code, _, errOut := u.cli(t, "approve", "ap", "k1", "--args", `{"command":7}`); code != 1 || !strings.Contains(errOut, "arguments") {
		t.Fatalf("approve with arguments failing the schema: exit %d %q", code, errOut)
	}
	u.mustCLI(t, "deny", "ap", "k1", "--reason", "not now")
	waitLine(t, watchOut, "the watch shows k1 denied", "k1", "denied")

	waitLine(t, promptOut, "the run goes on", "cleaned")
	if err := prompt.Wait(); err != nil {
		t.Fatalf("cairn prompt: %v\n%s", err, promptErr.String())
	}
	if err := watch.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if err := watch.Wait(); err != nil {
		t.Fatalf("cairn approvals --watch did not stop cleanly on SIGINT: %v", err)
	}

	es := u.entries(t, "ap")
	var results []string
	for _, e := range es {
		if m := e.Message; m != nil && m.Role == events.RoleToolResult {
			results = append(results, m.ToolCallID+":"+m.Content.Text())
		}
	}
	if len(results) != 2 || !strings.HasPrefix(results[0], "k1:") || !strings.Contains(results[0], "not now") ||
		!strings.HasPrefix(results[1], "k2:") || !strings.Contains(results[1], "edited") {
		t.Fatalf("results in the model's order, the edit run and the denial named: %q", results)
	}
	denied := u.eventuallyCLI(t, func(s string) bool { return strings.Contains(s, "k1") }, "approvals", "--status", "denied")
	if !strings.Contains(denied, "denied") || strings.Contains(denied, "k2") {
		t.Fatalf("cairn approvals --status denied:\n%s", denied)
	}
}
