package extension_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/cairn-agents/cairn/pkg/agent/hook"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/extension"
	"github.com/cairn-agents/cairn/pkg/llm"
)

// The seed's hook semantics hold for remote handlers as for in-process
// ones (DESIGN §5, §12): tool_result may patch content, details and
// terminate; context may replace the messages; before_provider_request
// may patch the request (null clears); before_agent_start may add
// messages and change the system prompt; session_before_compact and
// session_before_tree may cancel. Each handler here reads the
// event as a non-Go extension would, from the JSON on the wire with the
// field names docs/extensions.md gives.
func TestRemoteHooksKeepTheSeedsSemantics(t *testing.T) {
	p := start(t)
	ctx := context.Background()
	field := func(raw json.RawMessage, path ...string) json.RawMessage {
		for _, k := range path {
			var m map[string]json.RawMessage
			if err := json.Unmarshal(raw, &m); err != nil {
				return nil
			}
			raw = m[k]
		}
		return raw
	}
	handle := func(name, hookName string, fn func(ev json.RawMessage) any) {
		t.Helper()
		if err := extension.HandleJSON(ctx, p.x, hookName, extension.Handler{Name: name}, func(_ context.Context, c extension.Call[json.RawMessage]) (any, error) {
			return fn(c.Event), nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	handle("result", "tool_result", func(ev json.RawMessage) any {
		if string(field(ev, "toolName")) != `"bash"` {
			return map[string]any{}
		}
		return map[string]any{"content": []events.Block{events.TextBlock("patched")}, "details": map[string]int{"exit": 3},
			"isError": true, "terminate": true}
	})
	handle("ctx", "context", func(ev json.RawMessage) any {
		var msgs []events.Message
		_ = json.Unmarshal(field(ev, "messages"), &msgs)
		return map[string]any{"messages": []events.Message{{Role: events.RoleUser, Content: events.TextContent("replaced " + msgs[0].Content.Text())}}}
	})
	handle("req", "before_provider_request", func(ev json.RawMessage) any {
		var sys string
		_ = json.Unmarshal(field(ev, "request", "systemPrompt"), &sys)
		var maxTokens int64
		_ = json.Unmarshal(field(ev, "request", "maxTokens"), &maxTokens)
		return map[string]any{"systemPrompt": sys + " (policy)", "maxTokens": maxTokens * 2, "temperature": nil,
			"options": map[string]any{"drop": nil, "add": "x"}}
	})
	handle("start", "before_agent_start", func(ev json.RawMessage) any {
		var sys string
		_ = json.Unmarshal(field(ev, "systemPrompt"), &sys)
		return map[string]any{"messages": []events.Message{{Role: events.RoleUser, Content: events.TextContent("remember the rules")}},
			"systemPrompt": sys + " + rules"}
	})
	handle("compact", "session_before_compact", func(ev json.RawMessage) any {
		if string(field(ev, "reason")) == `"manual"` {
			return map[string]any{"cancel": true, "reason": "not during office hours"}
		}
		return map[string]any{}
	})
	handle("tree", "session_before_tree", func(ev json.RawMessage) any {
		return map[string]any{"cancel": string(field(ev, "targetId")) == `"e7"`, "reason": "keep the branch"}
	})
	p.waitHandlers(t, "result", "ctx", "req", "start", "compact", "tree")
	r, reported := p.session("default", "s1")

	res := hook.ToolResult(ctx, r, hook.ToolResultEvent{ToolCallID: "c1", ToolName: "bash", Content: []events.Block{events.TextBlock("raw")}})
	if res.Content[0].Text != "patched" || string(res.Details) != `{"exit":3}` || !res.IsError || !res.Terminate {
		t.Errorf("tool_result patched to %+v, want content, details, isError and terminate", res)
	}
	if res := hook.ToolResult(ctx, r, hook.ToolResultEvent{ToolName: "ls", Content: []events.Block{events.TextBlock("raw")}}); res.Content[0].Text != "raw" || res.Terminate {
		t.Errorf("an empty answer changed the result: %+v", res)
	}

	msgs, err := hook.Context(ctx, r, []events.Message{{Role: events.RoleUser, Content: events.TextContent("hello")}, {Role: events.RoleUser, Content: events.TextContent("two")}})
	if err != nil || len(msgs) != 1 || msgs[0].Content.Text() != "replaced hello" {
		t.Errorf("context = %+v %v, want the handler's messages in place of the two", msgs, err)
	}

	temp := 0.5
	req := &llm.Request{Model: llm.Model{Provider: "scripted", ID: "m"}, SystemPrompt: "be brief", MaxTokens: 100, Temperature: &temp,
		Options: map[string]json.RawMessage{"drop": json.RawMessage(`1`), "keep": json.RawMessage(`2`)}}
	hook.BeforeProviderRequest(ctx, r, req)
	if req.SystemPrompt != "be brief (policy)" || req.MaxTokens != 200 || req.Temperature != nil || req.Model.ID != "m" {
		t.Errorf("request patched to system %q maxTokens %d temperature %v model %q", req.SystemPrompt, req.MaxTokens, req.Temperature, req.Model.ID)
	}
	var opts []string
	for k, v := range req.Options {
		opts = append(opts, k+"="+string(v))
	}
	slices.Sort(opts)
	if want := []string{`add="x"`, "keep=2"}; !slices.Equal(opts, want) {
		t.Errorf("options %v, want %v", opts, want)
	}

	injected, system := hook.BeforeAgentStart(ctx, r, []events.Message{{Role: events.RoleUser, Content: events.TextContent("go")}}, "base")
	if len(injected) != 1 || injected[0].Content.Text() != "remember the rules" || system != "base + rules" {
		t.Errorf("before_agent_start: injected %+v, system %q", injected, system)
	}
	if d := hook.SessionBeforeCompact(ctx, r, hook.SessionBeforeCompactEvent{Reason: "manual"}); !d.Cancel || d.Reason != "not during office hours" {
		t.Errorf("session_before_compact: %+v, want cancelled with the reason", d)
	}
	if d := hook.SessionBeforeCompact(ctx, r, hook.SessionBeforeCompactEvent{Reason: "threshold"}); d.Cancel {
		t.Errorf("session_before_compact of a threshold: %+v, want not cancelled", d)
	}
	target := "e7"
	if c := hook.SessionBeforeTree(ctx, r, hook.SessionBeforeTreeEvent{TargetID: &target}); !c.Cancel || c.Reason != "keep the branch" {
		t.Errorf("session_before_tree: %+v, want cancelled", c)
	}
	if len(*reported) != 0 {
		t.Errorf("hook errors: %+v", *reported)
	}
}
