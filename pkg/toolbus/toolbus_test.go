package toolbus_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cairn-agents/cairn/internal/natstest"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/tool"
	"github.com/cairn-agents/cairn/pkg/toolbus"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

func TestProvisionIsIdempotentAndCheckNamesWhatIsMissing(t *testing.T) {
	srv := natstest.RunServer(t)
	_, js := natstest.JetStream(t, srv.Server)
	ctx := context.Background()
	err := toolbus.Check(ctx, js, events.Names{})
	if !errors.Is(err, toolbus.ErrNotProvisioned) || !strings.Contains(err.Error(), "CAIRN_TOOLS") {
		t.Fatalf("Check before Provision = %v, want ErrNotProvisioned naming CAIRN_TOOLS", err)
	}
	for range 2 {
		if err := toolbus.Provision(ctx, js, events.Names{}, toolbus.ProvisionOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := toolbus.Check(ctx, js, events.Names{}); err != nil {
		t.Fatal(err)
	}
	s, err := js.Stream(ctx, "CAIRN_TOOLS")
	if err != nil {
		t.Fatal(err)
	}
	if got := s.CachedInfo().Config.Retention; got != jetstream.WorkQueuePolicy {
		t.Errorf("CAIRN_TOOLS retention = %v, want work queue", got)
	}
	if err := toolbus.Provision(ctx, js, events.Names{}, toolbus.ProvisionOptions{Replicas: 9}); err == nil {
		t.Error("Provision with 9 replicas succeeded, want an error")
	}
}

func TestCallRoundTripWithWorkspaceUpdateAndRegistry(t *testing.T) {
	e := newEnv(t)
	root := t.TempDir()
	results := e.collect(t)
	updates := make(chan *nats.Msg, 10)
	sub, err := e.bus.JetStream().Conn().ChanSubscribe(events.Names{}.EventSubject(events.DefaultRef("s1")), updates)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	e.start(t, e.newBus(t), toolbus.Worker{Pool: "p", Tools: []tool.Tool{echoTool{}}, WorkspaceRoot: root, Name: "w1"})

	if err := e.bus.Dispatch(context.Background(), "p", call("s1", "c1", "echo", `{"text":"hi"}`)); err != nil {
		t.Fatal(err)
	}
	r := results.waitN(t, 1)[0]
	if r.IsError || r.SessionID != "s1" || r.ToolCallID != "c1" || r.ToolName != "echo" || r.Worker != "w1" {
		t.Fatalf("result = %+v", r.ToolResult)
	}
	if got := r.Content[0].Text; got != "hi" {
		t.Errorf("content = %q, want hi", got)
	}
	realRoot, _ := filepath.EvalSymlinks(root)
	if want := `{"workspace":` + mustJSON(filepath.Join(realRoot, "default", "s1")) + `}`; string(r.Details) != want {
		t.Errorf("details = %s, want %s (default workspace <root>/<tenant>/<sid>)", r.Details, want)
	}
	ev, err := events.DecodeEvent((<-updates).Data)
	if err != nil {
		t.Fatal(err)
	}
	if ev.Type != events.EvToolExecutionUpdate || ev.ToolCallID != "c1" || ev.Partial.Content.Text() != "partial hi" {
		t.Errorf("update event = %+v", ev)
	}
	reg, err := e.bus.Lookup(context.Background(), "echo")
	if err != nil || reg.Pool != "p" || !reg.Idempotent || reg.Mode != events.Parallel {
		t.Errorf("Lookup(echo) = %+v, %v", reg, err)
	}
	waitFor(t, "the call to be acknowledged", func() bool { return e.consumerInfo(t, "p").NumAckPending == 0 })
}

func TestInvalidCallsGetErrorResultsOrAreTerminated(t *testing.T) {
	e := newEnv(t)
	results := e.collect(t)
	e.start(t, e.newBus(t), toolbus.Worker{Pool: "p", Tools: []tool.Tool{echoTool{}}})
	ctx := context.Background()
	publish := func(subject, data string) {
		t.Helper()
		if _, err := e.js.Publish(ctx, subject, []byte(data)); err != nil {
			t.Fatal(err)
		}
	}
	publish("cairn.tool.p.default.echo", `not json`)                                                                         // terminated
	publish("cairn.tool.p.default.echo", `{"sessionId":"bad id!","toolCallId":"x","name":"echo","arguments":{}}`)            // terminated
	publish("cairn.tool.p.default.echo", `{"tenant":"Bad!","sessionId":"s1","toolCallId":"x","name":"echo","arguments":{}}`) // terminated
	publish("cairn.tool.p.default.echo", `{"sessionId":"s1","toolCallId":"args","name":"echo","arguments":[1]}`)
	publish("cairn.tool.p.default.nope", `{"sessionId":"s1","toolCallId":"unknown","name":"nope","arguments":{}}`)
	publish("cairn.tool.p.default.nope", `{"sessionId":"s1","toolCallId":"mismatch","name":"echo","arguments":{}}`)
	publish("cairn.tool.p.default.echo", `{"sessionId":"s1","toolCallId":"ws","name":"echo","arguments":{},"v":99}`)
	// A call of tenant acme's session on tenant beta's subject: a worker
	// confined to beta by NATS permissions must not run acme's calls.
	publish("cairn.tool.p.beta.echo", `{"tenant":"acme","sessionId":"s1","toolCallId":"tenant","name":"echo","arguments":{}}`)

	got := map[string]string{}
	for _, r := range results.waitN(t, 5) {
		if !r.IsError {
			t.Errorf("result for %s is not an error: %+v", r.ToolCallID, r.ToolResult)
		}
		got[r.ToolCallID] = r.Content[0].Text
	}
	for id, want := range map[string]string{
		"args":     "arguments: must be a JSON object",
		"unknown":  `unknown tool "nope": pool "p" serves echo`,
		"mismatch": `names tool "echo" but was published on cairn.tool.p.default.nope`,
		"tenant":   `tool call of a session of tenant "acme" was published on cairn.tool.p.beta.echo, the subject of tenant "beta"`,
		"ws":       "unsupported schema version 99",
	} {
		if !strings.Contains(got[id], want) {
			t.Errorf("result for %s = %q, want it to contain %q", id, got[id], want)
		}
	}
	waitFor(t, "every message to leave the work queue", func() bool {
		s, err := e.js.Stream(ctx, "CAIRN_TOOLS")
		if err != nil {
			t.Fatal(err)
		}
		info, err := s.Info(ctx)
		return err == nil && info.State.Msgs == 0
	})
	if info := e.consumerInfo(t, "p"); info.NumRedelivered != 0 || info.NumAckPending != 0 {
		t.Errorf("consumer redelivered %d, pending acks %d; want 0 and 0", info.NumRedelivered, info.NumAckPending)
	}
}

func TestWorkspaceOutsideTheRootIsRefused(t *testing.T) {
	e := newEnv(t)
	root := t.TempDir()
	outside := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "default"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "default", "link")); err != nil {
		t.Fatal(err)
	}
	results := e.collect(t)
	e.start(t, e.newBus(t), toolbus.Worker{Pool: "p", Tools: []tool.Tool{echoTool{}}, WorkspaceRoot: root})
	cases := map[string]string{"dotdot": "../x", "abs": outside, "link": "link/sub", "inside": "a/b"}
	for id, ws := range cases {
		c := call("s1", id, "echo", `{"text":"ok"}`)
		c.Workspace = ws
		if err := e.bus.Dispatch(context.Background(), "p", c); err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range results.waitN(t, len(cases)) {
		text := r.Content[0].Text
		switch r.ToolCallID {
		case "inside":
			if r.IsError || text != "ok" {
				t.Errorf("workspace inside the root: %+v", r.ToolResult)
			}
		case "link":
			if !r.IsError || !strings.Contains(text, "symlink") {
				t.Errorf("workspace through a symlink out: %q, want a symlink error", text)
			}
		default:
			if !r.IsError || !strings.Contains(text, "outside the tenant's workspace root") {
				t.Errorf("workspace %q: %q, want an outside-the-root error", cases[r.ToolCallID], text)
			}
		}
	}
}

func TestRegistryRefusesATooltakenByAnotherPool(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	if err := e.bus.Register(ctx, "a", echoTool{}.Spec()); err != nil {
		t.Fatal(err)
	}
	if err := e.bus.Register(ctx, "a", echoTool{}.Spec()); err != nil {
		t.Fatalf("re-registering for the same pool: %v", err)
	}
	if err := e.bus.Register(ctx, "b", echoTool{}.Spec()); !errors.Is(err, toolbus.ErrConflict) {
		t.Fatalf("registering for another pool = %v, want ErrConflict", err)
	}
	if _, err := e.bus.Lookup(ctx, "missing"); !errors.Is(err, toolbus.ErrNotFound) {
		t.Errorf("Lookup(missing) = %v, want ErrNotFound", err)
	}
	all, err := e.bus.Tools(ctx)
	if err != nil || len(all) != 1 || all[0].Name != "echo" || all[0].Pool != "a" {
		t.Errorf("Tools() = %+v, %v", all, err)
	}
}

func TestBadConfigurationAndCallsAreRefused(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	for name, w := range map[string]toolbus.Worker{
		"no pool":        {Tools: []tool.Tool{echoTool{}}},
		"bad pool":       {Pool: "a.b", Tools: []tool.Tool{echoTool{}}},
		"no tools":       {Pool: "p"},
		"duplicate tool": {Pool: "p", Tools: []tool.Tool{echoTool{}, echoTool{}}},
		"missing root":   {Pool: "p", Tools: []tool.Tool{echoTool{}}, WorkspaceRoot: filepath.Join(t.TempDir(), "nope")},
	} {
		if _, err := e.bus.Start(ctx, w); !errors.Is(err, events.ErrInvalid) {
			t.Errorf("%s: Start = %v, want a field error", name, err)
		}
	}
	for name, c := range map[string]events.ToolCall{
		"bad session": call("a b", "c", "echo", `{}`),
		"bad tool":    call("s", "c", "ec.ho", `{}`),
		"bad call id": call("s", "c d", "echo", `{}`),
		"no call id":  call("s", "", "echo", `{}`),
	} {
		if err := e.bus.Dispatch(ctx, "p", c); !errors.Is(err, events.ErrInvalid) {
			t.Errorf("%s: Dispatch = %v, want a field error", name, err)
		}
	}
}

// A pool restricted to tenants records them in the registry and runs no
// other tenant's call, even one dispatched past the orchestrator's check;
// the same session id in two tenants gets two workspaces.
func TestPoolRestrictedToTenants(t *testing.T) {
	e := newEnv(t)
	root := t.TempDir()
	results := e.collect(t)
	e.start(t, e.newBus(t), toolbus.Worker{Pool: "p", Tools: []tool.Tool{echoTool{}}, Tenants: []string{"acme"}, WorkspaceRoot: root})
	reg, err := e.bus.Lookup(context.Background(), "echo")
	if err != nil || !slices.Equal(reg.Tenants, []string{"acme"}) || !reg.Serves("acme") || reg.Serves("beta") {
		t.Fatalf("Lookup(echo) = %+v, %v; want the pool restricted to acme", reg, err)
	}
	for _, tenant := range []string{"acme", "beta"} {
		c := call("s1", tenant+"-call", "echo", `{"text":"ok"}`)
		c.Tenant = tenant
		if err := e.bus.Dispatch(context.Background(), "p", c); err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range results.waitN(t, 2) {
		switch r.ToolCallID {
		case "acme-call":
			if r.IsError || r.Tenant != "acme" || !strings.Contains(string(r.Details), filepath.Join("acme", "s1")) {
				t.Errorf("acme's call: %+v", r.ToolResult)
			}
		case "beta-call":
			if !r.IsError || r.Tenant != "beta" || r.Content[0].Text != `pool "p" does not serve tenant "beta"` {
				t.Errorf("beta's call on acme's pool: %+v, want a refusal", r.ToolResult)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(root, "beta")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("beta's refused call made a workspace: %v", err)
	}
	if err := e.bus.RegisterTenants(context.Background(), "q", []string{"Not A Tenant"}, events.ToolSpec{Name: "x"}); !errors.Is(err, events.ErrInvalid) {
		t.Errorf("registering an invalid tenant: %v, want ErrInvalid", err)
	}
}
