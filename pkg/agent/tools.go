package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/cairn-agents/cairn/pkg/agent/hook"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/tool"
)

// call is one tool call of a batch on its way through the pipeline.
type call struct {
	block  events.Block
	tool   tool.Tool
	args   json.RawMessage
	result tool.Result
	ready  bool           // result is final (no execution needed or done)
	parked bool           // waits for a person's answer (Config.Approval) or a task (Config.Deferred)
	kind   ParkKind       // what a parked call waits for
	msg    events.Message // the result message, once finished
	run    *run

	mu   sync.Mutex // guards done against late updates
	done bool
}

// runTools runs the tool calls of msg and records their results in call
// order. It reports whether every result asks the run to stop. When calls
// of the batch were parked for approval, it records nothing and returns
// the batch as a *ParkedError instead, the others having run.
func (r *run) runTools(ctx context.Context, msg *events.Message) ([]events.Message, bool, *ParkedError) {
	n := 0
	for i := range msg.Content.Blocks {
		if msg.Content.Blocks[i].Type == events.BlockToolCall {
			n++
		}
	}
	if n == 0 {
		return nil, false, nil
	}
	r.deferredN = 0
	calls := make([]call, 0, n)
	for i := range msg.Content.Blocks {
		if msg.Content.Blocks[i].Type == events.BlockToolCall {
			calls = append(calls, call{block: msg.Content.Blocks[i], run: r})
		}
	}
	if msg.StopReason == events.StopLength {
		for i := range calls {
			c := &calls[i]
			r.startEvent(c)
			c.result = tool.Error(fmt.Sprintf("Tool call %q was not run: the reply hit the output token limit, so its arguments may be cut off. Call the tool again with complete arguments.", c.block.Name))
			r.finish(c)
		}
		return r.record(calls), false, nil
	}

	sequential := false
	for i := range calls {
		if t := r.find(calls[i].block.Name); t != nil && t.Spec().Mode == events.Sequential {
			sequential = true
			break
		}
	}
	if sequential {
		for i := range calls {
			c := &calls[i]
			r.startEvent(c)
			r.prepare(ctx, c)
			if !c.ready {
				r.execute(ctx, c)
			}
			r.finish(c)
		}
	} else {
		// Calls are prepared one after another (tool_call hooks see them in
		// order), then run at once: all but the last on goroutines of
		// their own, the last on this one.
		var wg sync.WaitGroup
		var inline *call
		for i := range calls {
			c := &calls[i]
			r.startEvent(c)
			r.prepare(ctx, c)
			if c.ready {
				r.finish(c)
				continue
			}
			if inline != nil {
				prev := inline
				wg.Go(func() {
					r.execute(ctx, prev)
					r.finish(prev)
				})
			}
			inline = c
		}
		if inline != nil {
			r.execute(ctx, inline)
			r.finish(inline)
		}
		wg.Wait()
	}
	if p := parkedBatch(msg, calls); p != nil {
		return nil, false, p
	}
	results := r.record(calls)
	return results, terminates(calls), nil
}

func terminates(calls []call) bool {
	terminate := true
	for i := range calls {
		terminate = terminate && calls[i].result.Terminate
	}
	return terminate
}

func (r *run) find(name string) tool.Tool {
	for i := range r.specs {
		if r.specs[i].Name == name {
			return r.c.Tools[i]
		}
	}
	return nil
}

func (r *run) startEvent(c *call) {
	r.emit(events.Event{Type: events.EvToolExecutionStart, ToolCallID: c.block.ID, ToolName: c.block.Name, Args: c.block.Arguments})
}

// prepare finds the tool, prepares and validates the arguments and asks the
// tool_call hooks. A call that must not run gets its final result here.
func (r *run) prepare(ctx context.Context, c *call) {
	fail := func(s string) { c.result, c.ready = tool.Error(s), true }
	c.tool = r.find(c.block.Name)
	if c.tool == nil {
		fail("Tool " + c.block.Name + " not found")
		return
	}
	c.args = c.block.Arguments
	if p, ok := c.tool.(ArgumentPreparer); ok {
		args, err := prepareArgs(p, c.args)
		if err != nil {
			fail(fmt.Sprintf("Invalid arguments for tool %s: %v", c.block.Name, err))
			return
		}
		c.args = args
	}
	// The model's arguments are outside JSON: checked and compacted here,
	// where they enter, so the entries that copy them are one line each.
	args, err := events.CompactJSON(c.args)
	if err != nil {
		fail(fmt.Sprintf("Invalid arguments for tool %s: %v", c.block.Name, err))
		return
	}
	c.args = args
	if err := r.validator.Validate(c.tool.Spec(), c.args); err != nil {
		fail(err.Error())
		return
	}
	approval := hook.ApprovalNone
	if r.cfg.Hooks.Has(hook.ToolCallEvent{}.Name()) {
		d := hook.DecideToolCall(ctx, r.cfg.Hooks, hook.ToolCallEvent{ToolCallID: c.block.ID, ToolName: c.block.Name, Args: c.args})
		if d.Block {
			fail(d.Reason)
			return
		}
		if !bytes.Equal(d.Args, c.args) {
			patched, err := events.CompactJSON(d.Args) // a hook's patch: outside JSON too
			if err != nil {
				fail("A tool_call hook changed the arguments to invalid JSON: " + err.Error())
				return
			}
			d.Args = patched
			if err := r.validator.Validate(c.tool.Spec(), d.Args); err != nil {
				fail("A tool_call hook changed the arguments and they no longer fit: " + err.Error())
				return
			}
			c.args = d.Args
		}
		approval = d.Approval
	}
	if r.cfg.Approval != nil && r.cfg.Approval(ctx, c.block.Name, approval) {
		c.parked, c.ready = true, true
		if r.cfg.Parked != nil {
			r.cfg.Parked(ctx, ParkedCall{ToolCallID: c.block.ID, ToolName: c.block.Name, Arguments: c.args})
		}
		return
	}
	if r.cfg.Deferred != nil {
		pc := ParkedCall{ToolCallID: c.block.ID, ToolName: c.block.Name, Arguments: c.args, Kind: ParkTask}
		deferred, refusal := r.cfg.Deferred(ctx, pc, r.deferredN)
		switch {
		case refusal != "":
			fail(refusal)
		case deferred:
			r.deferredN++
			c.parked, c.ready, c.kind = true, true, ParkTask
			if r.cfg.Parked != nil {
				r.cfg.Parked(ctx, pc)
			}
		}
	}
}

func prepareArgs(p ArgumentPreparer, args json.RawMessage) (out json.RawMessage, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("preparing arguments panicked: %v", v)
		}
	}()
	return p.PrepareArguments(args)
}

// execute runs a prepared call and lets the tool_result hooks patch it.
func (r *run) execute(ctx context.Context, c *call) {
	if ctx.Err() != nil {
		c.result = tool.Error("Tool call " + c.block.Name + " was not run: the run was aborted")
		return
	}
	tctx, span := r.startTool(ctx, c)
	res, err := runTool(tctx, c.tool, tool.Call{ID: c.block.ID, Name: c.block.Name, Arguments: c.args, SessionID: r.cfg.SessionID, Workspace: r.cfg.Workspace}, c.update)
	if err != nil {
		res = tool.Error(err.Error())
	}
	endTool(span, res)
	if r.cfg.Hooks.Has(hook.ToolResultEvent{}.Name()) {
		ev := hook.ToolResult(ctx, r.cfg.Hooks, hook.ToolResultEvent{
			ToolCallID: c.block.ID, ToolName: c.block.Name, Args: c.args,
			Content: res.Content, Details: res.Details, IsError: res.IsError, Terminate: res.Terminate,
		})
		res = tool.Result{Content: ev.Content, Details: ev.Details, IsError: ev.IsError, Terminate: ev.Terminate}
	}
	c.result = res
}

// update reports a partial result, unless the call has finished.
func (c *call) update(p tool.Result) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done {
		return
	}
	partial := resultMessage(c, p)
	c.run.emit(events.Event{Type: events.EvToolExecutionUpdate, ToolCallID: c.block.ID, ToolName: c.block.Name, Partial: &partial})
}

func runTool(ctx context.Context, t tool.Tool, tc tool.Call, onUpdate func(tool.Result)) (res tool.Result, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("tool %s panicked: %v", tc.Name, v)
		}
	}()
	return t.Execute(ctx, tc, onUpdate)
}

// finish closes the call to updates and reports its end; a parked call
// ends when it is answered.
func (r *run) finish(c *call) {
	if c.parked {
		return
	}
	c.mu.Lock()
	c.done = true
	c.mu.Unlock()
	c.msg = stamp(resultMessage(c, c.result))
	r.emit(events.Event{Type: events.EvToolExecutionEnd, ToolCallID: c.block.ID, ToolName: c.block.Name, Result: &c.msg, IsError: c.msg.IsError})
}

// record adds the results to the context in call order.
func (r *run) record(calls []call) []events.Message {
	results := make([]events.Message, len(calls))
	for i := range calls {
		results[i] = calls[i].msg
		r.add(&calls[i].msg)
	}
	return results
}

func resultMessage(c *call, res tool.Result) events.Message {
	return events.Message{
		Role:       events.RoleToolResult,
		ToolCallID: c.block.ID,
		ToolName:   c.block.Name,
		Content:    events.Content{Blocks: res.Content},
		Details:    res.Details,
		IsError:    res.IsError,
	}
}
