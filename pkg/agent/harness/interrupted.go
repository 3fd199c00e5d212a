package harness

import (
	"context"
	"fmt"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/tool"
)

// closeInterrupted gives a result to every tool call of the context's last
// assistant message that has none (a crash, or a failed write, cut the turn
// short), so that the context the model sees is well formed: a call to an
// idempotent tool is run again; any other gets an error result saying it
// was interrupted. No events are published for these results; they are in
// the session before the run starts.
func (h *Harness) closeInterrupted(ctx context.Context, msgs []events.Message, tools []tool.Tool) ([]events.Message, error) {
	last := -1
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == events.RoleAssistant {
			last = i
			break
		}
	}
	if last < 0 {
		return msgs, nil
	}
	answered := make(map[string]bool)
	for _, m := range msgs[last+1:] {
		if m.Role == events.RoleToolResult {
			answered[m.ToolCallID] = true
		}
	}
	for _, c := range msgs[last].ToolCalls() {
		if answered[c.ID] {
			continue
		}
		res := tool.Error("Tool call " + c.Name + " was interrupted before its result was recorded; it was not run again.")
		if t := findTool(tools, c.Name); t != nil && t.Spec().Idempotent {
			res = h.rerun(ctx, t, c)
		}
		m := events.Message{
			Role: events.RoleToolResult, ToolCallID: c.ID, ToolName: c.Name,
			Content: events.Content{Blocks: res.Content}, Details: res.Details, IsError: res.IsError,
		}
		if err := h.appendMessage(ctx, m); err != nil {
			return nil, err
		}
		msgs = append(msgs, m)
	}
	return msgs, nil
}

// rerun runs an interrupted call of an idempotent tool again.
func (h *Harness) rerun(ctx context.Context, t tool.Tool, c events.Block) (res tool.Result) {
	defer func() {
		if v := recover(); v != nil {
			res = tool.Error(fmt.Sprintf("tool %s panicked: %v", c.Name, v))
		}
	}()
	if err := h.validator.Validate(t.Spec(), c.Arguments); err != nil {
		return tool.Error(err.Error())
	}
	res, err := t.Execute(ctx, tool.Call{ID: c.ID, Name: c.Name, Arguments: c.Arguments, SessionID: h.cfg.SessionID, Workspace: h.cfg.Workspace}, func(tool.Result) {})
	if err != nil {
		return tool.Error(err.Error())
	}
	return res
}

func findTool(tools []tool.Tool, name string) tool.Tool {
	for _, t := range tools {
		if t.Spec().Name == name {
			return t
		}
	}
	return nil
}
