package hook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"
)

// Caller sends one hook event to a remote handler and returns its answer:
// the JSON of the event's result type. The NATS request/reply adapter
// (pkg/extension's host side) implements it; so can anything else. The
// session the event belongs to is [ScopeFrom] of ctx.
type Caller interface {
	Call(ctx context.Context, hook string, event []byte) ([]byte, error)
}

// Policy says how long a remote handler may take and what a failure means.
type Policy struct {
	// Timeout bounds one call; 0 means 2 seconds.
	Timeout time.Duration
	// FailOpen makes a failed or late call count as "no opinion" (the zero
	// result); the failure is still reported as a hook_error. Without it
	// the failure is the handler's error: reported, and handled as the
	// event's reduction says (fail closed: a tool_call is blocked, a
	// context chain fails the model call, the other events skip the
	// handler).
	FailOpen bool
	// Observe, when set, hears every call's duration and failure (nil on
	// success; errors wrap ErrBadAnswer for an answer that does not decode).
	Observe func(d time.Duration, err error)
}

// DefaultTimeout bounds a remote call whose Policy sets none.
const DefaultTimeout = 2 * time.Second

// ErrRemote wraps every failure of a remote handler.
var ErrRemote = errors.New("remote hook failed")

// ErrBadAnswer marks an answer that is not the JSON of the event's result.
var ErrBadAnswer = errors.New("bad answer")

// ErrUnknownHook is returned by [OnRemoteNamed] for a hook name no event has.
var ErrUnknownHook = errors.New("unknown hook")

// OnRemote registers a handler for E that forwards each event to c as JSON
// and decodes the answer as R. An empty answer means the zero result.
func OnRemote[E Event[R], R any](r *Registry, c Caller, p Policy) (off func()) {
	return OnRemoteWith[E](r, c, p, Options{})
}

// OnRemoteWith is [OnRemote] with the handler placed by o.
func OnRemoteWith[E Event[R], R any](r *Registry, c Caller, p Policy, o Options) (off func()) {
	timeout := p.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	return OnWith(r, o, func(ctx context.Context, ev E) (R, error) {
		var res R
		start := time.Now()
		err := callRemote(ctx, c, o.Name, ev, &res, timeout)
		if p.Observe != nil {
			p.Observe(time.Since(start), err)
		}
		if err != nil && p.FailOpen {
			var zero R
			return zero, fmt.Errorf("%w (%w)", err, ErrFailedOpen)
		}
		return res, err
	})
}

// remoteHooks registers a remote handler by hook name, for each event a
// remote handler may take.
var remoteHooks = map[string]func(*Registry, Caller, Policy, Options) func(){
	ContextEvent{}.Name():               OnRemoteWith[ContextEvent, ContextResult],
	BeforeProviderRequestEvent{}.Name(): OnRemoteWith[BeforeProviderRequestEvent, RequestPatch],
	BeforeAgentStartEvent{}.Name():      OnRemoteWith[BeforeAgentStartEvent, BeforeAgentStartResult],
	ToolCallEvent{}.Name():              OnRemoteWith[ToolCallEvent, ToolCallResult],
	ToolResultEvent{}.Name():            OnRemoteWith[ToolResultEvent, ToolResultPatch],
	SessionBeforeCompactEvent{}.Name():  OnRemoteWith[SessionBeforeCompactEvent, CompactDecision],
	SessionBeforeTreeEvent{}.Name():     OnRemoteWith[SessionBeforeTreeEvent, Cancel],
	NextTurnEvent{}.Name():              OnRemoteWith[NextTurnEvent, NextTurnResult],
}

// RemoteHooks lists the hook names a remote handler may register for, sorted.
func RemoteHooks() []string {
	names := make([]string, 0, len(remoteHooks))
	for n := range remoteHooks {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// OnRemoteNamed registers a remote handler for the hook called name (one
// of [RemoteHooks]), as [OnRemoteWith] does for its event type.
func OnRemoteNamed(r *Registry, name string, c Caller, p Policy, o Options) (off func(), err error) {
	on, ok := remoteHooks[name]
	if !ok {
		return nil, fmt.Errorf("%w %q; one of %v expected", ErrUnknownHook, name, RemoteHooks())
	}
	return on(r, c, p, o), nil
}

func callRemote[E Event[R], R any](ctx context.Context, c Caller, handler string, ev E, res *R, timeout time.Duration) error {
	who := ev.Name()
	if handler != "" {
		who = ev.Name() + ": handler " + handler
	}
	body, err := json.Marshal(ev)
	if err != nil {
		return fmt.Errorf("%w: %s: encode the event: %v", ErrRemote, who, err)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	answer, err := c.Call(ctx, ev.Name(), body)
	if err != nil {
		return fmt.Errorf("%w: %s: %w", ErrRemote, who, err)
	}
	if len(answer) == 0 {
		return nil
	}
	if err := json.Unmarshal(answer, res); err != nil {
		return fmt.Errorf("%w: %s: %w: not a %s result: %v", ErrRemote, who, ErrBadAnswer, ev.Name(), err)
	}
	return nil
}
