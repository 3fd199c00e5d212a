package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/tool"
)

// Approvals (DESIGN §11). A call that Config.Approval parks is not run:
// Config.Parked hears of it before the batch's other calls start, the
// others run, and the run returns a *ParkedError carrying their results,
// recording none of them (a result recorded now would come before the
// parked call's, out of the model's order). The owner keeps those results
// and, when every parked call is answered, hands the batch to [Resume],
// which runs the approved calls, records every result in call order and
// goes on as after any batch.

// ParkedCall is a call waiting for an answer, with its prepared arguments.
type ParkedCall struct {
	ToolCallID string
	ToolName   string
	Arguments  json.RawMessage
	Kind       ParkKind
}

// ParkKind says what a parked call waits for.
type ParkKind int

const (
	ParkApproval ParkKind = iota // a person's answer (Config.Approval)
	ParkTask                     // a result from outside the run (Config.Deferred)
)

// ParkedError is the end of a run whose batch waits for answers: Parked
// lists the waiting calls in call order, Held the results of the others
// (they ran, or were refused before running), in call order.
type ParkedError struct {
	Message events.Message // the assistant message whose calls these are
	Parked  []ParkedCall
	Held    []events.Message
}

func (e *ParkedError) Error() string {
	return fmt.Sprintf("the run waits for the answers to %d tool call(s)", len(e.Parked))
}

func parkedBatch(msg *events.Message, calls []call) *ParkedError {
	var p *ParkedError
	for i := range calls {
		if calls[i].parked {
			if p == nil {
				p = &ParkedError{Message: *msg}
			}
			c := &calls[i]
			p.Parked = append(p.Parked, ParkedCall{ToolCallID: c.block.ID, ToolName: c.block.Name, Arguments: c.args, Kind: c.kind})
		}
	}
	if p == nil {
		return nil
	}
	for i := range calls {
		if !calls[i].parked {
			p.Held = append(p.Held, calls[i].msg)
		}
	}
	return p
}

// Answer is the answer to a parked call: approved (Arguments, when set,
// replace the call's), or refused with Denial as the error result the
// model sees.
type Answer struct {
	Approve   bool
	Arguments json.RawMessage
	Denial    string
}

// Batch is a parked batch whose every call is answered: the assistant
// message, the results held for the calls that were not parked (by call
// id) and the answers (by call id). A call with neither gets an error
// result saying its result was lost.
type Batch struct {
	Message events.Message
	Held    map[string]events.Message
	Answers map[string]Answer
}

// Resume finishes a parked batch and runs the loop on from it. c holds the
// context up to and including b.Message. The approved calls run at once
// (one after another if a tool of the batch is sequential), without asking
// Config.Approval or the tool_call hooks again; their arguments, edited
// ones included, are validated again.
func Resume(ctx context.Context, cfg *Config, c *Context, b Batch) ([]events.Message, error) {
	if cfg.Provider == nil {
		return nil, ErrNoProvider
	}
	r := newRun(cfg, c)
	r.resume = &b
	r.emit(events.Event{Type: events.EvAgentStart})
	r.emit(events.Event{Type: events.EvTurnStart})
	err := r.loop(ctx)
	return r.added, err
}

// resumeTools runs the approved calls of b and records every result of the
// batch in call order.
func (r *run) resumeTools(ctx context.Context, b *Batch) ([]events.Message, bool) {
	blocks := b.Message.ToolCalls()
	calls := make([]call, len(blocks))
	sequential := false
	for i := range blocks {
		c := &calls[i]
		c.block, c.run = blocks[i], r
		if held, ok := b.Held[c.block.ID]; ok {
			c.msg, c.ready = held, true
			c.result = tool.Result{Content: held.Content.Blocks, Details: held.Details, IsError: held.IsError}
			continue
		}
		a, ok := b.Answers[c.block.ID]
		r.startEvent(c)
		switch {
		case !ok:
			c.result, c.ready = tool.Error("Tool call "+c.block.Name+" has no result: it was lost while the batch waited for approvals"), true
		case !a.Approve:
			c.result, c.ready = tool.Error(a.Denial), true
		default:
			c.tool = r.find(c.block.Name)
			c.args = c.block.Arguments
			if a.Arguments != nil {
				c.args = a.Arguments
			}
			switch {
			case c.tool == nil:
				c.result, c.ready = tool.Error("Tool "+c.block.Name+" not found"), true
			default:
				if err := r.validator.Validate(c.tool.Spec(), c.args); err != nil {
					c.result, c.ready = tool.Error(err.Error()), true
				} else if c.tool.Spec().Mode == events.Sequential {
					sequential = true
				}
			}
		}
	}
	var wg sync.WaitGroup
	for i := range calls {
		c := &calls[i]
		if c.ready {
			if c.msg.Role == "" {
				r.finish(c)
			}
			continue
		}
		if sequential {
			r.execute(ctx, c)
			r.finish(c)
			continue
		}
		wg.Go(func() {
			r.execute(ctx, c)
			r.finish(c)
		})
	}
	wg.Wait()
	return r.record(calls), terminates(calls)
}
