package toolbus

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/tool"
)

// timeoutError is the cause of a call cut off by its timeout.
type timeoutError struct{ d time.Duration }

func (e timeoutError) Error() string { return "timed out after " + e.d.String() }

// execute runs call with its timeout, partial updates and cancellation (the
// work pool sends the in-progress acknowledgements). handBack is true when
// shutdown cut the call off before the tool returned a result.
func (s *Server) execute(parent context.Context, call events.ToolCall, t tool.Tool, workspace string) (res tool.Result, handBack bool) {
	s.running.Add(1)
	defer s.running.Add(-1)
	timeout := s.w.DefaultTimeout
	if ms := t.Spec().TimeoutMs; ms > 0 {
		timeout = time.Duration(ms) * time.Millisecond
	}
	if call.TimeoutMs > 0 {
		timeout = time.Duration(call.TimeoutMs) * time.Millisecond
	}
	ctx, cancel := context.WithCancelCause(parent)
	defer cancel(nil)
	untrack := s.track(call.Session(), call.ToolCallID, cancel)
	defer untrack()
	ctx, cancelTimeout := context.WithTimeoutCause(ctx, timeout, timeoutError{timeout})
	defer cancelTimeout()

	var open atomic.Bool
	open.Store(true)
	onUpdate := func(r tool.Result) {
		if open.Load() {
			s.publishUpdate(call, r)
		}
	}
	res, err := runTool(ctx, t, tool.Call{ID: call.ToolCallID, Name: call.Name, Arguments: call.Arguments,
		SessionID: call.SessionID, Tenant: call.Session().Tenant, Workspace: workspace}, onUpdate)
	open.Store(false)
	if err == nil {
		return res, false
	}
	cause := context.Cause(ctx)
	var te timeoutError
	switch {
	case ctx.Err() != nil && errors.Is(cause, ErrShutdown):
		return tool.Result{}, true
	case ctx.Err() != nil && errors.Is(cause, ErrAborted):
		return tool.Error(fmt.Sprintf("tool %s was cancelled: the session was aborted", call.Name)), false
	case ctx.Err() != nil && errors.As(cause, &te):
		return tool.Error(fmt.Sprintf("tool %s %s: %v", call.Name, te.Error(), err)), false
	default:
		return tool.Error(err.Error()), false
	}
}

// runTool calls t.Execute, turning a panic into an error.
func runTool(ctx context.Context, t tool.Tool, c tool.Call, onUpdate func(tool.Result)) (res tool.Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("tool %s panicked: %v", c.Name, p)
		}
	}()
	return t.Execute(ctx, c, onUpdate)
}

// publishUpdate sends a partial result as a live tool_execution_update event;
// events may be lost without harm, so failures are only logged.
func (s *Server) publishUpdate(call events.ToolCall, r tool.Result) {
	ev := events.Event{Type: events.EvToolExecutionUpdate, SessionID: call.SessionID,
		Time: time.Now().UTC().Format(time.RFC3339Nano), ToolCallID: call.ToolCallID, ToolName: call.Name,
		Partial: &events.Message{Role: events.RoleToolResult, ToolCallID: call.ToolCallID, ToolName: call.Name,
			Content: events.Content{Blocks: r.Content}, Details: r.Details, IsError: r.IsError, Timestamp: time.Now().UnixMilli()}}
	data, err := ev.Encode()
	if err == nil {
		err = s.bus.nc.Publish(s.bus.names.EventSubject(call.Session()), data)
	}
	if err != nil {
		s.log.Debug("partial update dropped", "toolCall", call.ToolCallID, "err", err)
	}
}
