package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cairn-agents/cairn/pkg/agent/harness"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/nats-io/nats.go/jetstream"
)

// needsRecovery reports whether the log ends in the middle of a turn: its
// last message is a user message or a tool result (a reply was owed), an
// assistant message whose tool calls are not all answered, or an error
// message with a retry mark (the retry was owed), or a reply with a
// compaction mark no compaction entry follows (the compaction was owed).
func (a *actor) needsRecovery() bool {
	_, path, _ := a.st.Path(context.Background())
	return needsRecoveryPath(path)
}

// needsRecoveryPath is needsRecovery of the active path path.
func needsRecoveryPath(path []events.Entry) bool {
	compacted := false
	for i := len(path) - 1; i >= 0; i-- {
		e := &path[i]
		if e.Type == events.EntryTurnInterrupted {
			return false
		}
		if e.Type == events.EntryCompaction {
			compacted = true
		}
		if r := e.Retry; r != nil && r.Code == events.RetryCompaction && e.Message != nil {
			return !compacted || len(unanswered(path[i:])) > 0
		}
		if e.Type != events.EntryMessage || e.Message == nil {
			continue
		}
		switch e.Message.Role {
		case events.RoleUser, events.RoleToolResult:
			return true
		case events.RoleAssistant:
			// A retried error: cut during the back-off or the compaction
			// before the retry.
			return e.Retry != nil || len(unanswered(path[i:])) > 0
		default:
			return false
		}
	}
	return false
}

// unanswered returns the tool calls of path's first entry (an assistant
// message) that no later tool result answers, in call order.
func unanswered(path []events.Entry) []events.Block {
	answered := map[string]bool{}
	for _, e := range path[1:] {
		if e.Type == events.EntryMessage && e.Message != nil && e.Message.Role == events.RoleToolResult {
			answered[e.Message.ToolCallID] = true
		}
	}
	var out []events.Block
	for _, c := range path[0].Message.ToolCalls() {
		if !answered[c.ID] {
			out = append(out, c)
		}
	}
	return out
}

// recover closes a turn a crash cut short (DESIGN §5): every tool call of it
// gets its one result — the one a toolrunner stored, or, after dispatching
// the call again (a no-op if it is still queued, a re-run if the tool is
// idempotent, an "interrupted" error if not), the one that comes back — and a
// turn_interrupted entry says the turn ended there. The run is not resumed:
// the next prompt goes on from this context.
func (a *actor) recover(ctx context.Context) error {
	a.o.metrics.recoveries.Inc()
	_, path, err := a.st.Path(ctx)
	if err != nil {
		return err
	}
	last := -1
	for i := len(path) - 1; i >= 0; i-- {
		if e := &path[i]; e.Type == events.EntryMessage && e.Message != nil && e.Message.Role == events.RoleAssistant {
			last = i
			break
		}
	}
	if last >= 0 {
		// A batch cut short while its answered calls ran: held results
		// and refusals are its own, not the toolrunners' (approvals.go).
		held, answers := batchRecords(path[last+1:])
		for _, c := range unanswered(path[last:]) {
			var m events.Message
			if h, ok := held[c.ID]; ok {
				m = h
			} else if ans, ok := answers[c.ID]; ok && ans.Decision != events.DecisionApprove {
				m = events.Message{Role: events.RoleToolResult, ToolName: c.Name, IsError: true, Timestamp: time.Now().UnixMilli(),
					Content: events.Content{Blocks: []events.Block{events.TextBlock(harness.Denial(c.Name, ans))}}}
			} else {
				r := a.recoverCall(ctx, c)
				if ctx.Err() != nil {
					return ctx.Err()
				}
				m = r.ResultMessage(time.Now().UnixMilli())
			}
			m.ToolCallID = c.ID // the model's id, not the wire id
			if _, err := a.st.Append(ctx, events.Entry{Type: events.EntryMessage, Message: &m}); err != nil {
				return fmt.Errorf("record recovered result of %s: %w", c.ID, err)
			}
		}
	}
	_, err = a.st.Append(ctx, events.Entry{Type: events.EntryTurnInterrupted,
		Reason: "the orchestrator running this turn stopped before it finished; the turn was closed on recovery"})
	return err
}

// batchRecords returns the held results and the answers among entries.
func batchRecords(entries []events.Entry) (map[string]events.Message, map[string]events.Entry) {
	held, answers := map[string]events.Message{}, map[string]events.Entry{}
	for _, e := range entries {
		switch {
		case e.Type == events.EntryToolResultHeld && e.Message != nil:
			held[e.ToolCallID] = *e.Message
		case e.Type == events.EntryApprovalAnswered:
			answers[e.ToolCallID] = e
		}
	}
	return held, answers
}

// recoverCall finds or obtains the result of one unanswered call.
func (a *actor) recoverCall(ctx context.Context, c events.Block) events.ToolResult {
	wire := a.st.wireCallID(c.ID)
	ch := a.waits.register(wire)
	defer a.waits.unregister(wire)
	if r, ok := a.storedResult(ctx, wire); ok {
		return r
	}
	errResult := func(msg string) events.ToolResult {
		return events.ToolResult{ToolCallID: wire, ToolName: c.Name, IsError: true, Interrupted: true,
			Content: []events.Block{events.TextBlock(msg)}}
	}
	reg, err := a.o.bus.Lookup(ctx, c.Name)
	if err != nil {
		return errResult(fmt.Sprintf("Tool call %s was interrupted and cannot be run again: tool %q is not registered.", c.Name, c.Name))
	}
	h := a.header()
	call := events.ToolCall{Tenant: a.sid.Tenant, SessionID: a.sid.ID, ToolCallID: wire, Name: c.Name, Arguments: c.Arguments,
		Workspace: h.Cwd, Idempotent: reg.Idempotent, TimeoutMs: reg.TimeoutMs}
	if err := a.o.bus.Dispatch(ctx, reg.Pool, call); err != nil {
		return errResult(fmt.Sprintf("Tool call %s was interrupted and could not be dispatched again: %v", c.Name, err))
	}
	wait := 2*time.Minute + time.Duration(reg.TimeoutMs)*time.Millisecond
	timer := time.NewTimer(wait)
	defer timer.Stop()
	// Look in the stream again now and then: if the first look failed (a
	// timeout under load) and the call had already been answered, the
	// dispatch above was a duplicate and no new result will come.
	again := time.NewTicker(2 * time.Second)
	defer again.Stop()
	for {
		select {
		case r := <-ch:
			return r
		case <-again.C:
			if r, ok := a.storedResult(ctx, wire); ok {
				return r
			}
		case <-timer.C:
			return errResult(fmt.Sprintf("Tool call %s was interrupted and no result came back within %s.", c.Name, wait))
		case <-ctx.Done():
			return errResult("Tool call " + c.Name + " was interrupted.")
		}
	}
}

// storedResult looks for the result of wire among the session's stored results.
func (a *actor) storedResult(ctx context.Context, wire string) (events.ToolResult, bool) {
	stream, err := a.o.js.Stream(ctx, a.o.cfg.Names.ResultsStream())
	if err != nil {
		return events.ToolResult{}, false
	}
	subject := a.o.cfg.Names.ResultSubject(a.sid)
	for seq := uint64(1); ; {
		m, err := stream.GetMsg(ctx, seq, jetstream.WithGetMsgSubject(subject))
		if errors.Is(err, jetstream.ErrMsgNotFound) || err != nil {
			return events.ToolResult{}, false
		}
		if r, err := events.DecodeToolResult(m.Data); err == nil && r.ToolCallID == wire {
			return r, true
		}
		seq = m.Sequence + 1
	}
}
