package hook

import (
	"context"
	"encoding/json"
	"strconv"

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
// Approval is the handler's opinion on asking a person first (DESIGN §11):
// [ApprovalAllow], [ApprovalAsk], [ApprovalDeny] (blocks like Block, Reason
// naming why) or "" (no opinion, the session's policy decides).
type ToolCallResult struct {
	Block    bool            `json:"block,omitempty"`
	Reason   string          `json:"reason,omitempty"`
	Args     json.RawMessage `json:"args,omitempty"`
	Approval string          `json:"approval,omitempty"`
}

// The values of ToolCallResult.Approval.
const (
	ApprovalNone  = ""      // no opinion
	ApprovalAllow = "allow" // run without asking, whatever the policy says
	ApprovalAsk   = "ask"   // park the call for a person's answer
	ApprovalDeny  = "deny"  // block the call
)

// ValidApproval reports whether a is one of the Approval values.
func ValidApproval(a string) bool {
	switch a {
	case ApprovalNone, ApprovalAllow, ApprovalAsk, ApprovalDeny:
		return true
	}
	return false
}

func (ToolCallEvent) Name() string          { return "tool_call" }
func (ToolCallEvent) result(ToolCallResult) {}

// ToolCallDecision is what the tool_call handlers decided together.
type ToolCallDecision struct {
	Block    bool            // the call must not run; Reason says why
	Reason   string          //
	Args     json.RawMessage // the arguments as the handlers left them
	Approval string          // ApprovalAsk, ApprovalAllow or "" (never ApprovalDeny: that is Block)
}

// DecideToolCall asks the handlers in order whether the call may run and
// stops at the first block or deny. A failing handler blocks the call, and
// so does an Approval value it does not know. Otherwise the approvals
// reduce to ask if any handler asked, else allow if any allowed, else "".
func DecideToolCall(ctx context.Context, r *Registry, ev ToolCallEvent) ToolCallDecision {
	d := ToolCallDecision{Args: ev.Args}
	emit(ctx, r, ev,
		func(ev ToolCallEvent) ToolCallEvent { ev.Args = d.Args; return ev },
		func(res ToolCallResult) bool {
			if res.Args != nil {
				d.Args = res.Args
			}
			switch {
			case res.Block || res.Approval == ApprovalDeny:
				d.Block, d.Reason = true, res.Reason
				if d.Reason == "" {
					d.Reason = "Tool call " + ev.ToolName + " was blocked by a hook"
				}
				return false
			case !ValidApproval(res.Approval):
				d.Block = true
				d.Reason = "Tool call " + ev.ToolName + " was blocked: a tool_call hook answered approval " + strconv.Quote(res.Approval) + " (want allow, ask, deny or none)"
				return false
			case res.Approval == ApprovalAsk:
				d.Approval = ApprovalAsk
			case res.Approval == ApprovalAllow && d.Approval == ApprovalNone:
				d.Approval = ApprovalAllow
			}
			return true
		},
		func(err error) bool {
			d.Block, d.Reason = true, "Tool call "+ev.ToolName+" was blocked: a tool_call hook failed: "+err.Error()
			return false
		})
	if d.Block {
		d.Approval = ApprovalNone
	}
	return d
}

// ToolCall is [DecideToolCall] without the approval: a deny blocks.
func ToolCall(ctx context.Context, r *Registry, ev ToolCallEvent) (block bool, reason string, args json.RawMessage) {
	d := DecideToolCall(ctx, r, ev)
	return d.Block, d.Reason, d.Args
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
