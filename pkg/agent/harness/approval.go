package harness

import (
	"context"
	"errors"
	"fmt"

	"github.com/cairn-agents/cairn/pkg/agent"
	"github.com/cairn-agents/cairn/pkg/events"
)

// Approvals (DESIGN §11, docs/approvals.md). A call Config.Approval parks
// gets an approval_requested entry at once, appended directly (not held:
// a person must see it while the other calls run) and published as an
// event. When the batch's other calls have finished, their results are
// appended as tool_result_held entries and the run returns [ErrWaiting]:
// the harness is idle, the session is waiting, and everything needed to go
// on is in the log. [Harness.Resume] goes on once every parked call is
// answered (approval_answered entries, the orchestrator's), recording the
// batch's results in the model's order.
//
// Sub-agents (DESIGN §13) park the same way: a call Config.Deferred takes
// gets a task_started entry naming its child session, and is answered
// when its result is held (a tool_result_held entry the orchestrator
// appends once the child settles).

// ErrWaiting ends a run whose batch waits for approvals or sub-agents (it
// wraps the *agent.ParkedError). The harness is idle; Resume goes on.
var ErrWaiting = errors.New("harness: the run waits for approvals or sub-agents")

// ErrNotWaiting is Resume's error when the session's active path ends in
// no parked batch, or one with calls not yet answered.
var ErrNotWaiting = errors.New("harness: no parked batch is fully answered")

// Wait is the parked batch at the end of a path, as the log records it.
type Wait struct {
	Message  events.Message            // the assistant message of the batch
	EntryID  string                    // its entry
	Requests []events.Entry            // approval_requested, in call order
	Answers  map[string]events.Entry   // approval_answered, by call id
	Held     map[string]events.Message // tool_result_held, by call id
	Tasks    []events.Entry            // task_started, in call order
}

// PendingTasks returns the task calls whose result is not held yet, in
// call order.
func (w *Wait) PendingTasks() []events.Entry { return notIn(w.Tasks, w.Held) }

// Task returns the task_started entry of a call, if the batch parked it
// for a sub-agent.
func (w *Wait) Task(toolCallID string) (events.Entry, bool) { return ofCall(w.Tasks, toolCallID) }

// Answered reports whether nothing of the batch waits any more: every
// approval request answered, every task's result held.
func (w *Wait) Answered() bool { return len(w.Pending()) == 0 && len(w.PendingTasks()) == 0 }

// Pending returns the approval requests not yet answered, in call order.
func (w *Wait) Pending() []events.Entry { return notIn(w.Requests, w.Answers) }

// Request returns the request of a call, if the batch parked it.
func (w *Wait) Request(toolCallID string) (events.Entry, bool) { return ofCall(w.Requests, toolCallID) }

// notIn returns the entries of es whose call has no key in done, in order.
func notIn[V any](es []events.Entry, done map[string]V) []events.Entry {
	var out []events.Entry
	for _, e := range es {
		if _, ok := done[e.ToolCallID]; !ok {
			out = append(out, e)
		}
	}
	return out
}

// ofCall returns the entry of es for a call.
func ofCall(es []events.Entry, toolCallID string) (events.Entry, bool) {
	for _, e := range es {
		if e.ToolCallID == toolCallID {
			return e, true
		}
	}
	return events.Entry{}, false
}

// WaitOf returns the parked batch path ends in, or nil: the last assistant
// message of path, when approval_requested or task_started entries follow
// it and nothing closed the batch (a tool result or a turn_interrupted after it).
func WaitOf(path []events.Entry) *Wait {
	last := -1
	for i := len(path) - 1; i >= 0; i-- {
		e := &path[i]
		if e.Type == events.EntryMessage && e.Message != nil && e.Message.Role == events.RoleAssistant {
			last = i
			break
		}
	}
	if last < 0 {
		return nil
	}
	w := &Wait{Message: *path[last].Message, EntryID: path[last].ID, Answers: map[string]events.Entry{}, Held: map[string]events.Message{}}
	byCall, tasks := map[string]events.Entry{}, map[string]events.Entry{}
	for _, e := range path[last+1:] {
		switch e.Type {
		case events.EntryApprovalRequested:
			byCall[e.ToolCallID] = e
		case events.EntryTaskStarted:
			tasks[e.ToolCallID] = e
		case events.EntryApprovalAnswered:
			w.Answers[e.ToolCallID] = e
		case events.EntryToolResultHeld:
			if e.Message != nil {
				w.Held[e.ToolCallID] = *e.Message
			}
		case events.EntryTurnInterrupted:
			return nil
		case events.EntryMessage:
			if e.Message != nil && e.Message.Role == events.RoleToolResult {
				return nil // the batch's results are recorded: it is over
			}
		}
	}
	for _, c := range w.Message.ToolCalls() {
		if r, ok := byCall[c.ID]; ok {
			w.Requests = append(w.Requests, r)
		}
		if t, ok := tasks[c.ID]; ok {
			w.Tasks = append(w.Tasks, t)
		}
	}
	if len(w.Requests) == 0 && len(w.Tasks) == 0 {
		return nil
	}
	return w
}

// Denial is the error result the model sees for a call answered with
// anything but approve: who refused it and why.
func Denial(toolName string, answer events.Entry) string {
	who := answer.Principal
	if who == "" {
		who = "an unauthenticated client"
	}
	switch answer.Decision {
	case events.DecisionExpire:
		return fmt.Sprintf("Tool call %s was denied: its approval request expired with no answer (%s).", toolName, answer.Reason)
	case events.DecisionAbort:
		return fmt.Sprintf("Tool call %s was denied by %s: the run was aborted while the call waited for approval.", toolName, who)
	}
	return fmt.Sprintf("Tool call %s was denied by %s: %s", toolName, who, answer.Reason)
}

// batch turns a fully answered wait into the loop's batch.
func (w *Wait) batch() agent.Batch {
	b := agent.Batch{Message: w.Message, Held: w.Held, Answers: map[string]agent.Answer{}}
	for _, r := range w.Requests {
		a := w.Answers[r.ToolCallID]
		if a.Decision == events.DecisionApprove {
			args := r.Arguments
			if a.Arguments != nil {
				args = a.Arguments
			}
			b.Answers[r.ToolCallID] = agent.Answer{Approve: true, Arguments: args}
		} else {
			b.Answers[r.ToolCallID] = agent.Answer{Denial: Denial(r.ToolName, a)}
		}
	}
	return b
}

// Resume goes on with the parked batch the active path ends in, once every
// parked call is answered: the approved calls run, every result of the
// batch is recorded in call order, and the run continues as after any
// batch (steering first, then the model). It fails with ErrNotWaiting,
// changing nothing, when there is no such batch, and with ErrBusy unless
// the harness is idle. Cancelling ctx aborts the run like Abort: the
// results are still recorded, then the run ends aborted.
func (h *Harness) Resume(ctx context.Context) error {
	return h.start(ctx, nil, modeResume)
}

// onParked records a parked call's request and publishes it.
func (h *Harness) onParked(ctx context.Context, c agent.ParkedCall) {
	if h.run.writeErr != nil {
		return
	}
	if c.Kind == agent.ParkTask {
		e := events.Entry{Type: events.EntryTaskStarted, ToolCallID: c.ToolCallID, ToolName: c.ToolName, Arguments: c.Arguments,
			ChildSessionID: events.ChildSessionID(h.cfg.SessionID, c.ToolCallID)}
		if _, err := h.appendEntry(ctx, e); err != nil {
			h.run.writeErr = err
			h.run.cancel(err)
		}
		return
	}
	e := events.Entry{Type: events.EntryApprovalRequested, ToolCallID: c.ToolCallID, ToolName: c.ToolName, Arguments: c.Arguments}
	if h.cfg.ApprovalExpiresAt != nil {
		e.ExpiresAt = h.cfg.ApprovalExpiresAt(ctx)
	}
	stored, err := h.appendEntry(ctx, e)
	if err != nil {
		h.run.writeErr = err
		h.run.cancel(err)
		return
	}
	h.publish(events.Event{Type: events.EvApprovalRequested, Approval: events.ApprovalOf(&stored)})
}

// park records the results a parked batch holds.
func (h *Harness) park(ctx context.Context, p *agent.ParkedError) error {
	for i := range p.Held {
		m := p.Held[i]
		if _, err := h.appendEntry(ctx, events.Entry{Type: events.EntryToolResultHeld, ToolCallID: m.ToolCallID, Message: &m}); err != nil {
			return err
		}
	}
	return nil
}

func (h *Harness) appendEntry(ctx context.Context, e events.Entry) (events.Entry, error) {
	h.wmu.Lock()
	defer h.wmu.Unlock()
	stored, err := h.cfg.Session.Append(context.WithoutCancel(ctx), e)
	if err != nil {
		return events.Entry{}, fmt.Errorf("harness: record %s: %w", e.Type, err)
	}
	h.run.lastLeafID = stored.ID
	return stored, nil
}

// approval is the loop's Approval: the process's policy, if any.
func (h *Harness) approval() func(context.Context, string, string) bool {
	if h.cfg.Approval == nil {
		return nil
	}
	return h.cfg.Approval
}
