package orchestrator

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/tool"
	"github.com/cairn-agents/cairn/pkg/toolbus"
	"github.com/cairn-agents/cairn/pkg/tools"
)

// waiters hands tool results, which arrive on the orchestrator's results
// consumer, to the tool calls waiting for them. A result that arrives before
// its waiter is kept until one registers.
type waiters struct {
	mu    sync.Mutex
	wait  map[string]chan events.ToolResult
	early map[string]events.ToolResult
}

func newWaiters() *waiters {
	return &waiters{wait: map[string]chan events.ToolResult{}, early: map[string]events.ToolResult{}}
}

func (w *waiters) register(id string) <-chan events.ToolResult {
	w.mu.Lock()
	defer w.mu.Unlock()
	ch := make(chan events.ToolResult, 1)
	if r, ok := w.early[id]; ok {
		delete(w.early, id)
		ch <- r
		return ch
	}
	w.wait[id] = ch
	return ch
}

func (w *waiters) unregister(id string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.wait, id)
}

// deliver passes r to its waiter, or keeps it.
func (w *waiters) deliver(r events.ToolResult) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if ch, ok := w.wait[r.ToolCallID]; ok {
		delete(w.wait, r.ToolCallID)
		ch <- r
		return
	}
	if len(w.early) < 1024 {
		w.early[r.ToolCallID] = r
	}
}

// remoteTool runs a tool on the toolrunners of its pool.
type remoteTool struct {
	reg       toolbus.Registration
	bus       *toolbus.Bus
	waits     *waiters
	store     *store
	session   events.SessionRef
	workspace string // relative to the tenant's root under the runners' workspace root
	// skill returns the text of the tenant's skill a read call's path
	// names (resources.go: skillFile); nil for tools other than read.
	skill func(path string) (string, bool)
}

func (t *remoteTool) Spec() events.ToolSpec { return t.reg.ToolSpec }

// Execute dispatches the call and waits for its one result. Cancelling ctx
// asks the runners to cancel it and returns ctx's error.
func (t *remoteTool) Execute(ctx context.Context, c tool.Call, _ func(tool.Result)) (tool.Result, error) {
	if t.skill != nil {
		if p, ok := tools.ReadPath(c.Arguments); ok {
			if text, ok := t.skill(p); ok {
				return tools.ReadText(ctx, c, text) // the skill as listed, from the orchestrator's copy
			}
		}
	}
	if !t.reg.Serves(t.session.Tenant) {
		// The registry says the pool's workers serve other tenants only:
		// the call is not dispatched, and the model sees why.
		return tool.Error(fmt.Sprintf("tool %s is served by pool %q, which does not serve tenant %q", c.Name, t.reg.Pool, t.session.Tenant)), nil
	}
	wire := t.store.wireCallID(c.ID)
	ch := t.waits.register(wire)
	defer t.waits.unregister(wire)
	call := events.ToolCall{Tenant: t.session.Tenant, SessionID: t.session.ID, ToolCallID: wire, Name: c.Name, Arguments: c.Arguments,
		Workspace: t.workspace, Idempotent: t.reg.Idempotent, TimeoutMs: t.reg.TimeoutMs}
	if err := t.bus.Dispatch(ctx, t.reg.Pool, call); err != nil {
		return tool.Result{}, fmt.Errorf("dispatch %s: %w", c.Name, err)
	}
	select {
	case r := <-ch:
		return tool.Result{Content: r.Content, Details: r.Details, IsError: r.IsError, Terminate: r.Terminate}, nil
	case <-ctx.Done():
		cctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = t.bus.Cancel(cctx, t.session, wire)
		return tool.Result{}, ctx.Err()
	}
}
