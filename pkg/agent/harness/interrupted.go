package harness

import (
	"context"

	"github.com/cairn-agents/cairn/pkg/events"
)

// closeInterrupted records an error result for every tool call of the
// context's last assistant message that has none (a crash, or a write
// failure, cut the turn short), so that the context the model sees is
// well formed. The calls are not run again here: re-dispatching
// idempotent calls after a crash is the orchestrator's decision.
func (h *Harness) closeInterrupted(ctx context.Context, msgs []events.Message) ([]events.Message, error) {
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
		m := events.Message{
			Role: events.RoleToolResult, ToolCallID: c.ID, ToolName: c.Name, IsError: true,
			Content: events.TextContent("Tool call " + c.Name + " was interrupted before its result was recorded; it was not run again."),
		}
		if err := h.appendMessage(ctx, m); err != nil {
			return nil, err
		}
		msgs = append(msgs, m)
	}
	return msgs, nil
}
