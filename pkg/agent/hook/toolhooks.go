package hook

import (
	"context"
	"encoding/json"

	"github.com/cairn-agents/cairn/pkg/events"
)

// ToolCallEvent is emitted before a tool call runs, its arguments prepared
// and validated.
type ToolCallEvent struct {
	ToolCallID string          `json:"toolCallId"`
	ToolName   string          `json:"toolName"`
	Args       json.RawMessage `json:"args"`
}

// ToolCallResult blocks the call when Block is set; Reason becomes the error
// result the model sees. Args, when set, replaces the call's arguments (the
// next handler sees them; they are validated again before the call runs).
type ToolCallResult struct {
	Block  bool            `json:"block,omitempty"`
	Reason string          `json:"reason,omitempty"`
	Args   json.RawMessage `json:"args,omitempty"`
}

func (ToolCallEvent) Name() string          { return "tool_call" }
func (ToolCallEvent) result(ToolCallResult) {}

// ToolCall asks the handlers in order whether the call may run and stops at
// the first block. A failing handler blocks the call. It returns the
// arguments as the handlers left them.
func ToolCall(ctx context.Context, r *Registry, ev ToolCallEvent) (block bool, reason string, args json.RawMessage) {
	args = ev.Args
	emit(ctx, r, ev,
		func(ev ToolCallEvent) ToolCallEvent { ev.Args = args; return ev },
		func(res ToolCallResult) bool {
			if res.Args != nil {
				args = res.Args
			}
			if res.Block {
				block, reason = true, res.Reason
				if reason == "" {
					reason = "Tool call " + ev.ToolName + " was blocked by a hook"
				}
				return false
			}
			return true
		},
		func(err error) bool {
			block, reason = true, "Tool call "+ev.ToolName+" was blocked: a tool_call hook failed: "+err.Error()
			return false
		})
	return block, reason, args
}

// ToolResultEvent is emitted after a tool call finished, with the result as
// patched by the handlers before.
type ToolResultEvent struct {
	ToolCallID string          `json:"toolCallId"`
	ToolName   string          `json:"toolName"`
	Args       json.RawMessage `json:"args"`
	Content    []events.Block  `json:"content"`
	Details    json.RawMessage `json:"details,omitempty"`
	IsError    bool            `json:"isError"`
	Terminate  bool            `json:"terminate,omitempty"`
}

// ToolResultPatch replaces the fields it sets.
type ToolResultPatch struct {
	Content   []events.Block  `json:"content,omitempty"`
	Details   json.RawMessage `json:"details,omitempty"`
	IsError   *bool           `json:"isError,omitempty"`
	Terminate *bool           `json:"terminate,omitempty"`
}

func (ToolResultEvent) Name() string           { return "tool_result" }
func (ToolResultEvent) result(ToolResultPatch) {}

// ToolResult applies each handler's patch in turn. Failing handlers are
// reported and skipped.
func ToolResult(ctx context.Context, r *Registry, ev ToolResultEvent) ToolResultEvent {
	emit(ctx, r, ev,
		func(ToolResultEvent) ToolResultEvent { return ev },
		func(p ToolResultPatch) bool {
			if p.Content != nil {
				ev.Content = p.Content
			}
			if p.Details != nil {
				ev.Details = p.Details
			}
			if p.IsError != nil {
				ev.IsError = *p.IsError
			}
			if p.Terminate != nil {
				ev.Terminate = *p.Terminate
			}
			return true
		}, nil)
	return ev
}
