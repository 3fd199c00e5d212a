package toolbus

import (
	"context"
	"fmt"
	"time"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/tool"
	"github.com/nats-io/nats.go"
)

// cancelGrace is how long a cancelled [Remote] call waits for the worker's
// cancelled result before returning the context's error.
const cancelGrace = 5 * time.Second

// Remote is a [tool.Tool] executed by the workers of a pool: Execute
// dispatches the call and waits for its result, forwarding partial updates.
// It is how an in-process agent loop calls a tool served on the bus.
//
// Remote waits with core NATS subscriptions to the session's result and event
// subjects, made before the call is dispatched: a caller that loses its
// connection while waiting may miss the result, which stays in CAIRN_RESULTS
// for recovery (docs/protocol.md). Cancelling ctx sends a cancel request for
// the call and returns the worker's cancelled result if it arrives within 5s,
// else ctx's error.
type Remote struct {
	Bus  *Bus
	Pool string
	// ToolSpec is the tool's spec, e.g. from [Bus.Lookup]; its idempotence
	// and timeout travel with each call.
	ToolSpec events.ToolSpec
}

// RemoteTool returns the registered tool name as a [Remote].
func (b *Bus) RemoteTool(ctx context.Context, name string) (*Remote, error) {
	r, err := b.Lookup(ctx, name)
	if err != nil {
		return nil, err
	}
	return &Remote{Bus: b, Pool: r.Pool, ToolSpec: r.ToolSpec}, nil
}

// Spec returns the tool's spec.
func (r *Remote) Spec() events.ToolSpec { return r.ToolSpec }

// Execute dispatches c to the pool and waits for its result. c.Workspace is
// passed on as the call's workspace: a path inside the workers' workspace
// root, absolute or relative to it.
func (r *Remote) Execute(ctx context.Context, c tool.Call, onUpdate func(tool.Result)) (tool.Result, error) {
	b := r.Bus
	ref := events.Ref(c.Tenant, c.SessionID)
	if err := ref.Validate(); err != nil {
		return tool.Result{}, err
	}
	results := make(chan *nats.Msg, 4)
	rsub, err := b.nc.ChanSubscribe(b.names.ResultSubject(ref), results)
	if err != nil {
		return tool.Result{}, fmt.Errorf("toolbus: subscribe to results: %w", err)
	}
	defer rsub.Unsubscribe()
	updates := make(chan *nats.Msg, 64)
	if onUpdate != nil {
		usub, err := b.nc.ChanSubscribe(b.names.EventSubject(ref), updates)
		if err != nil {
			return tool.Result{}, fmt.Errorf("toolbus: subscribe to events: %w", err)
		}
		defer usub.Unsubscribe()
	}
	name := c.Name
	if name == "" {
		name = r.ToolSpec.Name
	}
	call := events.ToolCall{Tenant: ref.Tenant, SessionID: ref.ID, ToolCallID: c.ID, Name: name, Arguments: c.Arguments,
		Workspace: c.Workspace, Idempotent: r.ToolSpec.Idempotent, TimeoutMs: r.ToolSpec.TimeoutMs}
	if err := b.Dispatch(ctx, r.Pool, call); err != nil {
		return tool.Result{}, err
	}
	done := ctx.Done()
	var grace <-chan time.Time
	for {
		select {
		case m := <-results:
			tr, err := events.DecodeToolResult(m.Data)
			if err != nil || tr.ToolCallID != c.ID {
				continue // another call's result, or another kind
			}
			for drained := false; !drained; { // updates sent before the result come first
				select {
				case m := <-updates:
					r.forward(c.ID, m, onUpdate)
				default:
					drained = true
				}
			}
			return tool.Result{Content: tr.Content, Details: tr.Details, IsError: tr.IsError, Terminate: tr.Terminate}, nil
		case m := <-updates:
			r.forward(c.ID, m, onUpdate)
		case <-done:
			done = nil
			cctx, cancel := context.WithTimeout(context.Background(), cancelGrace)
			err := b.Cancel(cctx, ref, c.ID)
			cancel()
			if err != nil {
				return tool.Result{}, ctx.Err()
			}
			grace = time.After(cancelGrace)
		case <-grace:
			return tool.Result{}, ctx.Err()
		}
	}
}

// forward passes a tool_execution_update of call id to onUpdate.
func (r *Remote) forward(id string, m *nats.Msg, onUpdate func(tool.Result)) {
	ev, err := events.DecodeEvent(m.Data)
	if err == nil && ev.Type == events.EvToolExecutionUpdate && ev.ToolCallID == id && ev.Partial != nil {
		onUpdate(tool.Result{Content: ev.Partial.Content.Blocks, Details: ev.Partial.Details, IsError: ev.Partial.IsError})
	}
}
