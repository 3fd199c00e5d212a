package sessiontree

import (
	"time"

	"github.com/cairn-agents/cairn/pkg/events"
)

// interruptedText is the text of the tool result that closes a tool call a
// turn_interrupted entry cut short; the entry's reason follows it.
const interruptedText = "The tool call was interrupted before it returned a result: "

// reducer accumulates the messages of a path, one entry at a time.
type reducer struct {
	msgs []events.Message
	// pending holds the tool calls of the last assistant message that have no
	// result yet, in call order.
	pending    []pendingCall
	pendingBuf [8]pendingCall
}

type pendingCall struct{ id, name string }

// add appends what the entry at position i of the path contributes.
func (r *reducer) add(i int, e *events.Entry) error {
	switch e.Type {
	case events.EntryMessage:
		m := e.Message
		switch m.Role {
		case events.RoleAssistant:
			r.pending = r.pending[:0]
			for _, b := range m.Content.Blocks {
				if b.Type == events.BlockToolCall {
					r.pending = append(r.pending, pendingCall{id: b.ID, name: b.Name})
				}
			}
		case events.RoleToolResult:
			r.answer(m.ToolCallID)
		}
		r.msgs = append(r.msgs, *m)
	case events.EntryCustomMessage:
		ts, err := millis(i, e)
		if err != nil {
			return err
		}
		r.msgs = append(r.msgs, events.Message{
			Role:       events.RoleCustom,
			CustomType: e.CustomType,
			Content:    e.Content,
			Display:    e.Display,
			Details:    e.Details,
			Timestamp:  ts,
		})
	case events.EntryBranchSummary:
		if e.Summary == "" {
			return nil // pi sends no empty summary
		}
		ts, err := millis(i, e)
		if err != nil {
			return err
		}
		r.msgs = append(r.msgs, events.Message{
			Role:      events.RoleBranchSummary,
			Summary:   e.Summary,
			FromID:    e.FromID,
			Timestamp: ts,
		})
	case events.EntryTurnInterrupted:
		if len(r.pending) == 0 {
			return nil
		}
		ts, err := millis(i, e)
		if err != nil {
			return err
		}
		for _, c := range r.pending {
			r.msgs = append(r.msgs, events.Message{
				Role:       events.RoleToolResult,
				ToolCallID: c.id,
				ToolName:   c.name,
				Content:    events.TextContent(interruptedText + e.Reason),
				IsError:    true,
				Timestamp:  ts,
			})
		}
		r.pending = r.pending[:0]
	}
	return nil
}

// answer marks the tool call id as having its result.
func (r *reducer) answer(id string) {
	for j, c := range r.pending {
		if c.id == id {
			r.pending = append(r.pending[:j], r.pending[j+1:]...)
			return
		}
	}
}

// millis returns the entry's timestamp in Unix milliseconds, the unit of
// message timestamps.
func millis(i int, e *events.Entry) (int64, error) {
	t, err := time.Parse(time.RFC3339Nano, e.Timestamp)
	if err != nil {
		return 0, pathErr(i, e.ID, "timestamp %q is not an RFC 3339 time", e.Timestamp)
	}
	return t.UnixMilli(), nil
}
