package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cairn-agents/cairn/internal/kittest"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// poolsScript calls the team pool's MCP tool on "echo please".
const poolsScript = `{
  "rules": [
    {"match": {"lastRole": "user", "contains": "echo please"}, "reply": {"toolCalls": [{"name": "mcp__team__echo", "arguments": {"text": "from the team pool"}}]}},
    {"match": {"lastRole": "toolResult", "tool": "mcp__team__echo"}, "reply": {"text": "echo done"}},
    {"reply": {"text": "ok"}}
  ]
}`

// A pool restricted to a tenant, over real processes: `cairn up` (its own
// toolrunner serves the built-in tools to every tenant) and a separate
// `cairn toolrunner --pool team --tenants acme` serving an MCP server's
// tool. acme's session calls it and gets its result; beta's session that
// names the tool gets the error result docs/tenancy.md promises, and the
// team pool's runner ran nothing for it (its results counter); a beta
// session created with the default tools is not offered the tool at all.
func TestE2EPoolRestrictedToATenant(t *testing.T) {
	u := startUpWith(t, poolsScript)
	recorded := []string{"XDG_CONFIG_HOME=" + os.Getenv("XDG_CONFIG_HOME")}
	keys := map[string]string{}
	for _, tn := range []string{"acme", "beta"} {
		out, err := u.cairnAs(t, recorded, "keys", "create", "--tenant", tn, "--role", "member", "--name", tn+" member")
		if err != nil {
			t.Fatalf("keys create --tenant %s: %v %s", tn, err, out)
		}
		keys[tn] = lastLine(out)
	}

	metrics := freeAddr(t)
	runner := exec.Command(cairnBinary(t), "toolrunner", "--nats", u.nats, "--creds", u.creds,
		"--workspace-root", t.TempDir(), "--pool", "team", "--tenants", "acme", "--http", metrics, "--mcp-only",
		"--mcp", "team="+os.Args[0]+" -test.run=^$")
	// The MCP server is this test binary as the child TestMain knows.
	runner.Env = append(os.Environ(), "CAIRN_TEST_CHILD=mcpserver")
	stderr := &syncBuffer{}
	runner.Stderr = stderr
	if err := runner.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := runner.Process.Signal(syscall.SIGTERM); err != nil {
			t.Errorf("signal the toolrunner: %v", err)
		}
		if err := runner.Wait(); err != nil {
			t.Errorf("the toolrunner exited with %v\n%s", err, stderr.String())
		}
	})
	nc, err := nats.Connect(u.nats, u.natsOpts(t))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	kittest.Eventually(t, 60*time.Second, "the team pool's tool registered for acme", func() error {
		kv, err := js.KeyValue(context.Background(), events.Names{}.ToolsBucket())
		if err != nil {
			return err
		}
		e, err := kv.Get(context.Background(), "mcp__team__echo")
		if err != nil {
			return fmt.Errorf("%w; toolrunner stderr:\n%s", err, stderr.String())
		}
		if !strings.Contains(string(e.Value()), `"tenants":["acme"]`) {
			return fmt.Errorf("registration %s", e.Value())
		}
		return nil
	})

	// acme: offered the tool by default, the call runs on the team pool.
	if out, err := u.cairnAs(t, nil, "--token", keys["acme"], "session", "new", "--id", "a1"); err != nil {
		t.Fatalf("acme: session new: %v %s", err, out)
	}
	if out, err := u.cairnAs(t, nil, "--token", keys["acme"], "prompt", "a1", "echo please"); err != nil || !strings.Contains(out, "echo done") {
		t.Fatalf("acme: prompt: %v %s", err, out)
	}
	res := toolResultOf(t, u, keys["acme"], "a1")
	if res.IsError || res.Content.Text() != "from the team pool" {
		t.Fatalf("acme's call of the team pool's tool: %+v", res)
	}

	// beta names the tool: the call is refused before any pool sees it.
	if out, err := u.cairnAs(t, nil, "--token", keys["beta"], "session", "new", "--id", "b1", "--tools", "mcp__team__echo"); err != nil {
		t.Fatalf("beta: session new: %v %s", err, out)
	}
	if out, err := u.cairnAs(t, nil, "--token", keys["beta"], "prompt", "b1", "echo please"); err != nil || !strings.Contains(out, "echo done") {
		t.Fatalf("beta: prompt: %v %s", err, out)
	}
	res = toolResultOf(t, u, keys["beta"], "b1")
	want := `tool mcp__team__echo is served by pool "team", which does not serve tenant "beta"`
	if !res.IsError || res.Content.Text() != want {
		t.Fatalf("beta's call of acme's pool's tool: %+v, want the error %q", res, want)
	}
	// The team pool stored one result: acme's.
	if got := metricLines(t, metrics, "cairn_toolrunner_results_total{"); !strings.Contains(got, `tool="mcp__team__echo"`) || strings.Count(got, "\n") != 1 || !strings.HasSuffix(strings.TrimSpace(got), " 1") {
		t.Errorf("the team pool's results after beta's call:\n%s", got)
	}

	// beta with the default tools is not offered the tool.
	if out, err := u.cairnAs(t, nil, "--token", keys["beta"], "session", "new", "--id", "b2"); err != nil {
		t.Fatalf("beta: session new b2: %v %s", err, out)
	}
	code, body := u.as(t, keys["beta"], "GET", "/v1/sessions/b2/context", nil)
	if code != http.StatusOK || strings.Contains(body, "mcp__team__echo") || !strings.Contains(body, `"ls"`) {
		t.Errorf("beta's default tools: %d %s", code, body)
	}
	code, body = u.as(t, keys["acme"], "GET", "/v1/sessions/a1/context", nil)
	if code != http.StatusOK || !strings.Contains(body, "mcp__team__echo") {
		t.Errorf("acme's default tools: %d %s", code, body)
	}
}

// toolResultOf is the one tool result in session sid's log, read with
// token.
func toolResultOf(t *testing.T, u *upProcess, token, sid string) *events.Message {
	t.Helper()
	code, body := u.as(t, token, "GET", "/v1/sessions/"+sid+"/export?format=jsonl", nil)
	if code != 200 {
		t.Fatalf("export of %s: %d %s", sid, code, body)
	}
	var res *events.Message
	for l := range strings.Lines(body) {
		e, err := events.DecodeEntry([]byte(l))
		if err != nil {
			t.Fatalf("export of %s: %v", sid, err)
		}
		if e.Type == events.EntryMessage && e.Message.Role == events.RoleToolResult {
			if res != nil {
				t.Fatalf("session %s has two tool results: %s", sid, body)
			}
			res = e.Message
		}
	}
	if res == nil {
		t.Fatalf("session %s has no tool result: %s", sid, body)
	}
	return res
}

// metricLines are the lines of the /metrics at addr that start with prefix.
func metricLines(t *testing.T, addr, prefix string) string {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	for l := range strings.Lines(string(data)) {
		if strings.HasPrefix(l, prefix) {
			out.WriteString(l)
		}
	}
	return out.String()
}
