// Package hook is the typed hook registry of the agent core: handlers that
// take part in the agent's decisions (rewrite the context, patch a provider
// request, block a tool call, patch a tool result, cancel a compaction or a
// navigation, replace the next turn's context or stop the run).
//
// Every hook event type names its result type through the [Event]
// constraint, so [On] type-checks the pairing at compile time:
//
//	hook.On(r, func(ctx context.Context, ev hook.ToolCallEvent) (hook.ToolCallResult, error) {
//		return hook.ToolCallResult{Block: true, Reason: "not today"}, nil
//	})
//
// Each event has its own reduction, applied by its emit function: [Context]
// chains, [BeforeProviderRequest] patches, [BeforeAgentStart] collects and
// chains, [DecideToolCall] stops at the first block or deny and otherwise
// reduces the approvals (any ask, else any allow, else no opinion), [ToolResult] patches in a
// chain, [SessionBeforeCompact] and [SessionBeforeTree] stop at the first
// cancel, [NextTurn] chains and may stop the run.
//
// # Ordering
//
// Handlers of one event run one after another in [Options] order: by
// priority (lower first; [On] registers with 0), then name, then
// registration order. A registry linked to a shared one ([Registry.Link])
// merges the shared handlers into that order, keeping only those of its
// [Scope]'s tenant (or of every tenant). A handler unregistered while an emission is in progress is not called by the
// rest of that emission; one registered during an emission is called from the
// next emission on.
//
// # Concurrency
//
// A Registry is safe for concurrent use. Handlers of tool_call and
// tool_result may run concurrently for different calls of a parallel batch,
// so they must be safe for concurrent use.
//
// # Errors
//
// A handler that returns an error or panics is isolated: the emission goes
// on with the next handler and the failure is reported as an
// [events.EvHookError] event to the registry's reporter. Two events differ:
// a failing tool_call handler blocks the call (the error becomes the reason),
// and a failing context handler fails the model call (the loop records an
// error assistant message), because a half-rewritten context cannot be
// trusted. A handler's error that wraps [ErrFailedOpen] (a fail-open
// remote handler's) is reported and otherwise ignored, whatever the event.
//
// Remote handlers ([OnRemote], [OnRemoteNamed]) send each event as JSON to
// a [Caller] (pkg/extension's over NATS) under a [Policy]: a timeout, and
// fail open or closed.
package hook
