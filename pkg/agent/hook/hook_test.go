package hook_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cairn-agents/cairn/pkg/agent/hook"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/llm"
)

func user(s string) events.Message {
	return events.Message{Role: events.RoleUser, Content: events.TextContent(s)}
}

func TestContextChainsInRegistrationOrder(t *testing.T) {
	r := hook.New(nil)
	for _, tag := range []string{"a", "b"} {
		hook.On(r, func(_ context.Context, ev hook.ContextEvent) (hook.ContextResult, error) {
			return hook.ContextResult{Messages: append(ev.Messages, user(tag))}, nil
		})
	}
	hook.On(r, func(context.Context, hook.ContextEvent) (hook.ContextResult, error) {
		return hook.ContextResult{}, nil // no opinion: unchanged
	})
	got, err := hook.Context(context.Background(), r, []events.Message{user("x")})
	if err != nil || len(got) != 3 || got[1].Content.Text() != "a" || got[2].Content.Text() != "b" {
		t.Fatalf("got %v, %v", got, err)
	}
}

func TestUnregisterDuringEmission(t *testing.T) {
	r := hook.New(nil)
	var calls []string
	var offB func()
	hook.On(r, func(context.Context, hook.ToolCallEvent) (hook.ToolCallResult, error) {
		calls = append(calls, "a")
		offB() // removes a later handler of this very emission
		return hook.ToolCallResult{}, nil
	})
	offB = hook.On(r, func(context.Context, hook.ToolCallEvent) (hook.ToolCallResult, error) {
		calls = append(calls, "b")
		return hook.ToolCallResult{}, nil
	})
	var offC func()
	offC = hook.On(r, func(context.Context, hook.ToolCallEvent) (hook.ToolCallResult, error) {
		calls = append(calls, "c")
		offC() // removes itself
		return hook.ToolCallResult{}, nil
	})
	hook.ToolCall(context.Background(), r, hook.ToolCallEvent{ToolName: "t"})
	hook.ToolCall(context.Background(), r, hook.ToolCallEvent{ToolName: "t"})
	if strings.Join(calls, "") != "aca" {
		t.Fatalf("calls = %v, want a c a", calls)
	}
}

func TestToolCallStopsAtFirstBlockAndErrorsBlock(t *testing.T) {
	var reported []events.Event
	r := hook.New(func(ev events.Event) { reported = append(reported, ev) })
	later := false
	hook.On(r, func(_ context.Context, ev hook.ToolCallEvent) (hook.ToolCallResult, error) {
		if ev.ToolName == "bad" {
			return hook.ToolCallResult{}, errors.New("policy store down")
		}
		return hook.ToolCallResult{Block: ev.ToolName == "rm", Reason: "no rm"}, nil
	})
	hook.On(r, func(context.Context, hook.ToolCallEvent) (hook.ToolCallResult, error) {
		later = true
		return hook.ToolCallResult{}, nil
	})
	if block, reason, _ := hook.ToolCall(context.Background(), r, hook.ToolCallEvent{ToolName: "rm"}); !block || reason != "no rm" || later {
		t.Fatalf("block=%v reason=%q later=%v", block, reason, later)
	}
	block, reason, _ := hook.ToolCall(context.Background(), r, hook.ToolCallEvent{ToolName: "bad"})
	if !block || !strings.Contains(reason, "policy store down") {
		t.Fatalf("a failing tool_call hook did not block: %v %q", block, reason)
	}
	if len(reported) != 1 || reported[0].Type != events.EvHookError || reported[0].Hook != "tool_call" {
		t.Fatalf("reported = %+v", reported)
	}
	if block, _, _ := hook.ToolCall(context.Background(), r, hook.ToolCallEvent{ToolName: "ls"}); block || !later {
		t.Fatal("ls blocked")
	}
}

func TestBeforeProviderRequestPatchesAndNullClears(t *testing.T) {
	r := hook.New(nil)
	hook.On(r, func(context.Context, hook.BeforeProviderRequestEvent) (hook.RequestPatch, error) {
		n := int64(99)
		return hook.RequestPatch{MaxTokens: &n, Options: map[string]json.RawMessage{"a": json.RawMessage(`1`), "b": json.RawMessage(`null`)}}, nil
	})
	hook.On(r, func(_ context.Context, ev hook.BeforeProviderRequestEvent) (hook.RequestPatch, error) {
		if ev.Request.MaxTokens != 99 {
			return hook.RequestPatch{}, errors.New("did not see the previous patch")
		}
		return hook.RequestPatch{}, nil
	})
	hook.On(r, func(context.Context, hook.BeforeProviderRequestEvent) (hook.RequestPatch, error) { panic("isolated") })
	req := &llm.Request{Options: map[string]json.RawMessage{"b": json.RawMessage(`true`), "c": json.RawMessage(`"x"`)}}
	hook.BeforeProviderRequest(context.Background(), r, req)
	if req.MaxTokens != 99 || string(req.Options["a"]) != "1" || req.Options["b"] != nil || string(req.Options["c"]) != `"x"` {
		t.Fatalf("request = %+v", req)
	}
}

func TestRequestPatchNullClearsOverJSON(t *testing.T) {
	var p hook.RequestPatch
	if err := json.Unmarshal([]byte(`{"temperature":null,"maxTokens":7,"options":{"x":null}}`), &p); err != nil {
		t.Fatal(err)
	}
	temp := 0.5
	req := &llm.Request{Temperature: &temp, Options: map[string]json.RawMessage{"x": json.RawMessage(`1`), "y": json.RawMessage(`2`)}}
	p.Apply(req)
	if req.Temperature != nil || req.MaxTokens != 7 || req.Options["x"] != nil || string(req.Options["y"]) != "2" {
		t.Fatalf("request = %+v", req)
	}
	(hook.RequestPatch{Clear: []string{"options"}}).Apply(req)
	if req.Options != nil {
		t.Fatal("options not cleared")
	}
}

func TestSessionHooksCancel(t *testing.T) {
	r := hook.New(nil)
	hook.On(r, func(context.Context, hook.SessionBeforeTreeEvent) (hook.Cancel, error) {
		return hook.Cancel{}, errors.New("skipped")
	})
	hook.On(r, func(context.Context, hook.SessionBeforeTreeEvent) (hook.Cancel, error) {
		return hook.Cancel{Cancel: true, Reason: "stay"}, nil
	})
	if c := hook.SessionBeforeTree(context.Background(), r, hook.SessionBeforeTreeEvent{}); !c.Cancel || c.Reason != "stay" {
		t.Fatalf("cancel = %+v", c)
	}
	if c := hook.SessionBeforeCompact(context.Background(), r, hook.SessionBeforeCompactEvent{}); c.Cancel {
		t.Fatal("no compact handler, but cancelled")
	}
}

// caller is a remote hook endpoint in process.
type caller func(ctx context.Context, name string, body []byte) ([]byte, error)

func (c caller) Call(ctx context.Context, name string, body []byte) ([]byte, error) {
	return c(ctx, name, body)
}

func TestRemoteHookPolicy(t *testing.T) {
	veto := caller(func(_ context.Context, name string, body []byte) ([]byte, error) {
		var ev hook.ToolCallEvent
		if err := json.Unmarshal(body, &ev); err != nil || name != "tool_call" {
			return nil, errors.New("bad request")
		}
		if ev.ToolName == "rm" {
			return []byte(`{"block":true,"reason":"platform policy"}`), nil
		}
		return nil, nil
	})
	r := hook.New(nil)
	hook.OnRemote[hook.ToolCallEvent](r, veto, hook.Policy{Timeout: time.Second})
	if block, reason, _ := hook.ToolCall(context.Background(), r, hook.ToolCallEvent{ToolName: "rm"}); !block || reason != "platform policy" {
		t.Fatalf("remote veto: %v %q", block, reason)
	}
	if block, _, _ := hook.ToolCall(context.Background(), r, hook.ToolCallEvent{ToolName: "ls"}); block {
		t.Fatal("remote allowed ls but it was blocked")
	}

	slow := caller(func(ctx context.Context, _ string, _ []byte) ([]byte, error) {
		<-ctx.Done() // never answers: the policy's timeout ends the call
		return nil, ctx.Err()
	})
	closed := hook.New(nil)
	hook.OnRemote[hook.ToolCallEvent](closed, slow, hook.Policy{Timeout: time.Millisecond})
	if block, reason, _ := hook.ToolCall(context.Background(), closed, hook.ToolCallEvent{ToolName: "ls"}); !block || !strings.Contains(reason, "deadline") {
		t.Fatalf("fail-closed: %v %q", block, reason)
	}
	open := hook.New(nil)
	hook.OnRemote[hook.ToolCallEvent](open, slow, hook.Policy{Timeout: time.Millisecond, FailOpen: true})
	if block, _, _ := hook.ToolCall(context.Background(), open, hook.ToolCallEvent{ToolName: "ls"}); block {
		t.Fatal("fail-open blocked")
	}
}

// Priority, then name, then registration order; a linked registry's
// handlers merge in, filtered by the scope's tenant; a fail-open error is
// reported and ignored.
func TestOrderScopeAndFailOpen(t *testing.T) {
	shared := hook.New(nil)
	var reported []events.Event
	r := hook.New(func(ev events.Event) { reported = append(reported, ev) })
	r.SetScope(hook.Scope{Tenant: "acme", SessionID: "s1"})
	r.Link(shared)
	tag := func(s string) func(context.Context, hook.ContextEvent) (hook.ContextResult, error) {
		return func(ctx context.Context, ev hook.ContextEvent) (hook.ContextResult, error) {
			if sc := hook.ScopeFrom(ctx); sc.Tenant != "acme" || sc.SessionID != "s1" {
				return hook.ContextResult{}, errors.New("scope not passed")
			}
			return hook.ContextResult{Messages: append(ev.Messages, user(s))}, nil
		}
	}
	hook.OnWith(shared, hook.Options{Priority: 5, Name: "b"}, tag("shared-5b"))
	hook.OnWith(shared, hook.Options{Priority: 5, Name: "a"}, tag("shared-5a"))
	hook.OnWith(shared, hook.Options{Priority: -3, Tenant: "beta"}, tag("beta-only"))
	hook.OnWith(shared, hook.Options{Priority: -2, Tenant: "acme"}, tag("acme-only"))
	hook.On(r, tag("own-0"))
	hook.OnWith(r, hook.Options{Priority: 1}, func(context.Context, hook.ContextEvent) (hook.ContextResult, error) {
		return hook.ContextResult{}, fmt.Errorf("down (%w)", hook.ErrFailedOpen)
	})
	msgs, err := hook.Context(context.Background(), r, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range msgs {
		got = append(got, m.Content.Text())
	}
	if want := "acme-only own-0 shared-5a shared-5b"; strings.Join(got, " ") != want {
		t.Fatalf("order %v, want %s", got, want)
	}
	if len(reported) != 1 || !strings.Contains(reported[0].Error, "down") {
		t.Fatalf("reported %+v, want the fail-open error", reported)
	}
}

// A handler answering garbage fails with ErrBadAnswer; the policy's
// observer hears every call.
func TestRemoteBadAnswer(t *testing.T) {
	garbage := caller(func(context.Context, string, []byte) ([]byte, error) { return []byte(`{"block":"maybe"}`), nil })
	var observed []error
	r := hook.New(nil)
	if _, err := hook.OnRemoteNamed(r, "tool_call", garbage, hook.Policy{Observe: func(_ time.Duration, err error) { observed = append(observed, err) }},
		hook.Options{Name: "g"}); err != nil {
		t.Fatal(err)
	}
	block, reason, _ := hook.ToolCall(context.Background(), r, hook.ToolCallEvent{ToolName: "ls"})
	if !block || !strings.Contains(reason, "handler g") || len(observed) != 1 || !errors.Is(observed[0], hook.ErrBadAnswer) {
		t.Fatalf("block %v %q, observed %v", block, reason, observed)
	}
	if _, err := hook.OnRemoteNamed(r, "nope", garbage, hook.Policy{}, hook.Options{}); !errors.Is(err, hook.ErrUnknownHook) {
		t.Fatalf("unknown hook: %v", err)
	}
}

func TestDecideToolCallReducesApprovals(t *testing.T) {
	cases := []struct {
		name      string
		answers   []string
		approval  string
		block     bool
		reasonHas string
	}{
		{"none", []string{"", ""}, "", false, ""},
		{"allow", []string{"", "allow"}, "allow", false, ""},
		{"ask beats allow", []string{"allow", "ask", "allow"}, "ask", false, ""},
		{"deny beats ask", []string{"ask", "deny", "allow"}, "", true, "no writes"},
		{"garbage blocks", []string{"allow", "maybe"}, "", true, `"maybe"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := hook.New(nil)
			for _, a := range tc.answers {
				hook.On(r, func(context.Context, hook.ToolCallEvent) (hook.ToolCallResult, error) {
					return hook.ToolCallResult{Approval: a, Reason: "no writes"}, nil
				})
			}
			d := hook.DecideToolCall(context.Background(), r, hook.ToolCallEvent{ToolName: "write"})
			if d.Approval != tc.approval || d.Block != tc.block || !strings.Contains(d.Reason, tc.reasonHas) {
				t.Fatalf("decision = %+v, want approval %q block %v reason with %q", d, tc.approval, tc.block, tc.reasonHas)
			}
		})
	}
	var res hook.ToolCallResult
	if err := json.Unmarshal([]byte(`{"approval":"ask"}`), &res); err != nil || res.Approval != hook.ApprovalAsk {
		t.Fatalf("the wire name of Approval: %+v %v", res, err)
	}
}
