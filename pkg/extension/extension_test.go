package extension_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairn-agents/cairn/internal/kittest"
	"github.com/cairn-agents/cairn/internal/natstest"
	"github.com/cairn-agents/cairn/pkg/agent/hook"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/extension"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
)

func TestMain(m *testing.M) { kittest.Main(m, nil) }

// platform is a real NATS server with a running Host, and an extension
// process's connection.
type platform struct {
	host *extension.Host
	kv   jetstream.KeyValue
	x    *extension.Extension
	reg  *prometheus.Registry
}

func start(t *testing.T) *platform { return startB(t) }

func startB(t testing.TB) *platform {
	t.Helper()
	srv := natstest.RunServer(t)
	nc, js := natstest.JetStream(t, srv.Server)
	reg := prometheus.NewRegistry()
	host, err := extension.NewHost(extension.HostConfig{Conn: nc, Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	kv, err := extension.OpenBucket(ctx, js, events.Names{})
	if err != nil {
		t.Fatal(err)
	}
	kittest.Run(t, context.Background(), "host", func(ctx context.Context) error { return host.Run(ctx, kv) })
	<-host.Ready()
	x, err := extension.New(ctx, natstest.Connect(t, srv.Server))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := x.Close(context.Background()); err != nil {
			t.Errorf("close the extension: %v", err)
		}
	})
	return &platform{host: host, kv: kv, x: x, reg: reg}
}

// waitHandlers waits (on the host's change signal) until the handlers in
// force are exactly names.
func (p *platform) waitHandlers(t *testing.T, names ...string) { p.waitHandlersB(t, names...) }

func (p *platform) waitHandlersB(t testing.TB, names ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		ch := p.host.Changes()
		var have []string
		for n := range p.host.Handlers() {
			have = append(have, n)
		}
		slices.Sort(have)
		slices.Sort(names)
		if slices.Equal(have, names) {
			return
		}
		select {
		case <-ch:
		case <-ctx.Done():
			t.Fatalf("handlers in force %v, want %v", have, names)
		}
	}
}

// session is a session's registry as the orchestrator builds it.
func (p *platform) session(tenant, id string) (*hook.Registry, *[]events.Event) {
	var mu sync.Mutex
	var reported []events.Event
	r := hook.New(func(ev events.Event) {
		mu.Lock()
		reported = append(reported, ev)
		mu.Unlock()
	})
	r.SetScope(hook.Scope{Tenant: tenant, SessionID: id})
	r.Link(p.host.Registry())
	return r, &reported
}

// calls is the count of cairn_extension_calls_total{handler,hook,outcome}.
func (p *platform) calls(handler, hookName, outcome string) float64 {
	mfs, _ := p.reg.Gather()
	for _, mf := range mfs {
		if mf.GetName() != "cairn_extension_calls_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			l := map[string]string{}
			for _, lp := range m.GetLabel() {
				l[lp.GetName()] = lp.GetValue()
			}
			if l["handler"] == handler && l["hook"] == hookName && l["outcome"] == outcome {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

func bash(cmd string) hook.ToolCallEvent {
	args, _ := json.Marshal(map[string]string{"command": cmd})
	return hook.ToolCallEvent{ToolCallID: "c1", ToolName: "bash", Args: args}
}

// A remote tool_call handler blocks a call and rewrites another's
// arguments; a remote tool_result handler patches the content; each call
// names the session's tenant and id.
func TestRemoteHandlersBlockAndPatch(t *testing.T) {
	p := start(t)
	ctx := context.Background()
	var seen sync.Map
	err := extension.Handle(ctx, p.x, extension.Handler{Name: "policy"}, func(_ context.Context, c extension.Call[hook.ToolCallEvent]) (hook.ToolCallResult, error) {
		seen.Store(c.Tenant+"/"+c.SessionID, true)
		var a struct{ Command string }
		_ = json.Unmarshal(c.Event.Args, &a)
		if strings.Contains(a.Command, "rm -rf") {
			return hook.ToolCallResult{Block: true, Reason: "no rm -rf"}, nil
		}
		return hook.ToolCallResult{Args: json.RawMessage(`{"command":"` + a.Command + ` --safe"}`)}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := extension.Handle(ctx, p.x, extension.Handler{Name: "redact"}, func(_ context.Context, c extension.Call[hook.ToolResultEvent]) (hook.ToolResultPatch, error) {
		return hook.ToolResultPatch{Content: []events.Block{events.TextBlock(strings.ReplaceAll(c.Event.Content[0].Text, "secret", "[redacted]"))}}, nil
	}); err != nil {
		t.Fatal(err)
	}
	p.waitHandlers(t, "policy", "redact")
	r, _ := p.session("acme", "s1")
	if block, reason, _ := hook.ToolCall(ctx, r, bash("rm -rf /")); !block || reason != "no rm -rf" {
		t.Fatalf("rm -rf: block %v reason %q", block, reason)
	}
	block, _, args := hook.ToolCall(ctx, r, bash("ls"))
	if block || string(args) != `{"command":"ls --safe"}` {
		t.Fatalf("ls: block %v args %s, want the patched arguments", block, args)
	}
	res := hook.ToolResult(ctx, r, hook.ToolResultEvent{ToolName: "bash", Content: []events.Block{events.TextBlock("the secret is 42")}})
	if got := res.Content[0].Text; got != "the [redacted] is 42" {
		t.Fatalf("patched content %q", got)
	}
	if _, ok := seen.Load("acme/s1"); !ok {
		t.Fatal("the request did not name the session's tenant and id")
	}
	if n := p.calls("policy", "tool_call", extension.OutcomeOK); n != 2 {
		t.Fatalf("%v ok calls counted, want 2", n)
	}
}

// Every way a handler can fail, under both policies: fail closed blocks
// the tool call with a reason naming the handler, fail open lets it
// through; both report a hook_error and count the outcome. No run waits
// longer than the handler's timeout.
func TestFailurePolicies(t *testing.T) {
	p := start(t)
	ctx := context.Background()
	stuck := make(chan struct{})
	t.Cleanup(func() { close(stuck) })
	serve := map[string]func(h extension.Handler) error{
		extension.OutcomeTimeout: func(h extension.Handler) error {
			return extension.Handle(ctx, p.x, h, func(ctx context.Context, _ extension.Call[hook.ToolCallEvent]) (hook.ToolCallResult, error) {
				select { // never answers in time
				case <-stuck:
				case <-ctx.Done():
				}
				return hook.ToolCallResult{}, nil
			})
		},
		extension.OutcomeBadAnswer: func(h extension.Handler) error {
			return extension.HandleJSON(ctx, p.x, "tool_call", h, func(context.Context, extension.Call[json.RawMessage]) (any, error) {
				return []string{"not", "a", "result"}, nil
			})
		},
		extension.OutcomeError: func(h extension.Handler) error {
			return extension.Handle(ctx, p.x, h, func(context.Context, extension.Call[hook.ToolCallEvent]) (hook.ToolCallResult, error) {
				return hook.ToolCallResult{}, errors.New("policy database unreachable")
			})
		},
		extension.OutcomeNoResponders: func(h extension.Handler) error {
			reg, _ := json.Marshal(events.ExtensionRegistration{Handler: h.Name, Hook: "tool_call", TimeoutMs: h.Timeout.Milliseconds(),
				Failure: map[bool]string{true: events.FailOpen, false: events.FailClosed}[h.FailOpen]})
			_, err := p.kv.Put(ctx, h.Name, reg) // registered, served by nobody
			return err
		},
	}
	for _, outcome := range []string{extension.OutcomeTimeout, extension.OutcomeBadAnswer, extension.OutcomeError, extension.OutcomeNoResponders} {
		for _, open := range []bool{false, true} {
			name := strings.ReplaceAll(outcome, "_", "-") + map[bool]string{true: "-open", false: "-closed"}[open]
			t.Run(name, func(t *testing.T) {
				if err := serve[outcome](extension.Handler{Name: name, Timeout: 100 * time.Millisecond, FailOpen: open}); err != nil {
					t.Fatal(err)
				}
				p.waitHandlers(t, name)
				r, reported := p.session("default", "s-"+name)
				block, reason, _ := hook.ToolCall(ctx, r, bash("ls"))
				if open && block {
					t.Fatalf("fail open blocked the call: %q", reason)
				}
				if !open && (!block || !strings.Contains(reason, "handler "+name)) {
					t.Fatalf("fail closed: block %v, reason %q; want blocked naming the handler", block, reason)
				}
				if len(*reported) != 1 || (*reported)[0].Type != events.EvHookError || !strings.Contains((*reported)[0].Error, name) {
					t.Fatalf("reported %+v, want one hook_error naming the handler", *reported)
				}
				if n := p.calls(name, "tool_call", outcome); n != 1 {
					t.Fatalf("%v calls with outcome %s counted, want 1", n, outcome)
				}
				if err := p.kv.Delete(ctx, name); err != nil {
					t.Fatal(err)
				}
				p.waitHandlers(t)
			})
		}
	}
}

// A handler registered for one tenant sees only that tenant's sessions.
func TestTenantScoping(t *testing.T) {
	p := start(t)
	ctx := context.Background()
	var mu sync.Mutex
	var tenants []string
	if err := extension.Handle(ctx, p.x, extension.Handler{Name: "acme-only", Tenant: "acme"}, func(_ context.Context, c extension.Call[hook.ToolCallEvent]) (hook.ToolCallResult, error) {
		mu.Lock()
		tenants = append(tenants, c.Tenant)
		mu.Unlock()
		return hook.ToolCallResult{Block: true, Reason: "acme policy"}, nil
	}); err != nil {
		t.Fatal(err)
	}
	p.waitHandlers(t, "acme-only")
	beta, _ := p.session("beta", "s1")
	if block, _, _ := hook.ToolCall(ctx, beta, bash("ls")); block || beta.Has("tool_call") {
		t.Fatal("another tenant's session ran acme's handler")
	}
	acme, _ := p.session("acme", "s1")
	if block, reason, _ := hook.ToolCall(ctx, acme, bash("ls")); !block || reason != "acme policy" {
		t.Fatalf("acme's session: block %v %q", block, reason)
	}
	if !slices.Equal(tenants, []string{"acme"}) {
		t.Fatalf("the handler saw tenants %v, want only acme", tenants)
	}
}

// Handlers run in priority order (lower first), then by name, in-process
// ones (priority 0) among them, each seeing the previous one's context.
func TestPriorityOrder(t *testing.T) {
	p := start(t)
	ctx := context.Background()
	for _, h := range []extension.Handler{{Name: "late-b", Priority: 5}, {Name: "first", Priority: -1}, {Name: "late-a", Priority: 5}} {
		name := h.Name
		if err := extension.Handle(ctx, p.x, h, func(_ context.Context, c extension.Call[hook.ContextEvent]) (hook.ContextResult, error) {
			return hook.ContextResult{Messages: append(c.Event.Messages, events.Message{Role: events.RoleUser, Content: events.TextContent(name)})}, nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	p.waitHandlers(t, "late-b", "first", "late-a")
	r, _ := p.session("default", "s1")
	hook.On(r, func(_ context.Context, ev hook.ContextEvent) (hook.ContextResult, error) {
		return hook.ContextResult{Messages: append(ev.Messages, events.Message{Role: events.RoleUser, Content: events.TextContent("in-process")})}, nil
	})
	msgs, err := hook.Context(ctx, r, nil)
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, m := range msgs {
		order = append(order, m.Content.Text())
	}
	if want := []string{"first", "in-process", "late-a", "late-b"}; !slices.Equal(order, want) {
		t.Fatalf("order %v, want %v", order, want)
	}
}

// Deleting a registration from the bucket unregisters it live: the next
// emission no longer calls it; a new registration applies likewise.
func TestLiveRegistrationAndUnregistration(t *testing.T) {
	p := start(t)
	ctx := context.Background()
	block := func(_ context.Context, _ extension.Call[hook.ToolCallEvent]) (hook.ToolCallResult, error) {
		return hook.ToolCallResult{Block: true, Reason: "blocked"}, nil
	}
	if err := extension.Handle(ctx, p.x, extension.Handler{Name: "veto"}, block); err != nil {
		t.Fatal(err)
	}
	p.waitHandlers(t, "veto")
	r, _ := p.session("default", "s1")
	if b, _, _ := hook.ToolCall(ctx, r, bash("ls")); !b {
		t.Fatal("registered handler not called")
	}
	if err := p.x.Unregister(ctx, "veto"); err != nil {
		t.Fatal(err)
	}
	p.waitHandlers(t)
	if b, reason, _ := hook.ToolCall(ctx, r, bash("ls")); b || r.Has("tool_call") {
		t.Fatalf("unregistered handler still called: %q", reason)
	}
	// A bad registration put by hand is ignored, not half-applied.
	if _, err := p.kv.Put(ctx, "bad", []byte(`{"handler":"bad","hook":"no_such_hook"}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := p.kv.Put(ctx, "mismatch", []byte(`{"handler":"other","hook":"tool_call"}`)); err != nil {
		t.Fatal(err)
	}
	if err := extension.Handle(ctx, p.x, extension.Handler{Name: "veto2"}, block); err != nil {
		t.Fatal(err)
	}
	p.waitHandlers(t, "veto2")
	if b, _, _ := hook.ToolCall(ctx, r, bash("ls")); !b {
		t.Fatal("a handler registered after the session's registry was made is not called")
	}
}

// Registrations that break the rules are refused before anything is
// registered, each naming its problem.
func TestBadRegistrationsAreRefused(t *testing.T) {
	p := start(t)
	ctx := context.Background()
	none := func(context.Context, extension.Call[hook.ToolCallEvent]) (hook.ToolCallResult, error) {
		return hook.ToolCallResult{}, nil
	}
	for _, tc := range []struct {
		h    extension.Handler
		want string
	}{
		{extension.Handler{Name: ""}, "handler name is empty"},
		{extension.Handler{Name: "a.b"}, "only A-Z a-z 0-9 _ - are allowed"},
		{extension.Handler{Name: "x", Tenant: "Acme!"}, "tenant"},
		{extension.Handler{Name: "x", Timeout: time.Hour}, "timeoutMs"},
		{extension.Handler{Name: "x", Priority: 2_000_000}, "priority"},
	} {
		err := extension.Handle(ctx, p.x, tc.h, none)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want an error naming %q", tc.h, err, tc.want)
		}
	}
	if err := extension.HandleJSON(ctx, p.x, "no_such_hook", extension.Handler{Name: "x"}, nil); !errors.Is(err, hook.ErrUnknownHook) {
		t.Errorf("unknown hook: %v", err)
	}
	if len(p.host.Handlers()) != 0 {
		t.Fatalf("refused registrations left handlers: %v", p.host.Handlers())
	}
	keys, err := p.kv.ListKeys(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for k := range keys.Keys() {
		t.Errorf("refused registration %q is in the bucket", k)
	}
}

// Lifecycle notices reach a subscribed extension, by tenant.
func TestNotices(t *testing.T) {
	p := start(t)
	got := make(chan events.ExtensionNotice, 4)
	if err := p.x.Notices("acme", func(n events.ExtensionNotice) { got <- n }); err != nil {
		t.Fatal(err)
	}
	p.host.Notify(events.SessionRef{Tenant: "beta", ID: "s1"}, events.NoticeSessionStart, nil)
	p.host.Notify(events.SessionRef{Tenant: "acme", ID: "s2"}, events.NoticeSessionCompact, map[string]string{"entryId": "e1"})
	n := <-got
	if n.Type != events.NoticeSessionCompact || n.Tenant != "acme" || n.SessionID != "s2" || string(n.Details) != `{"entryId":"e1"}` {
		t.Fatalf("notice %+v", n)
	}
	select {
	case n := <-got:
		t.Fatalf("a second notice %+v; beta's must not reach an acme subscriber", n)
	default:
	}
}
