// Package extension is Cairn's extension protocol over NATS (DESIGN §12,
// docs/extensions.md) from both sides: [Handle] and [Extension] for
// writing an extension (a process that registers hook handlers and
// answers their requests), [Host] for the orchestrator, which watches the
// registrations and calls the handlers as remote hooks of package hook.
//
//	x, _ := extension.New(ctx, nc)
//	defer x.Close(ctx)
//	extension.Handle(ctx, x, extension.Handler{Name: "no-rm"},
//		func(ctx context.Context, c extension.Call[hook.ToolCallEvent]) (hook.ToolCallResult, error) {
//			return hook.ToolCallResult{Block: c.Event.ToolName == "bash"}, nil
//		})
//
// # Ordering
//
// An orchestrator calls the handlers of one hook one after another, in
// priority order (lower first), then by handler name, in-process handlers
// included (priority 0), with the hook's reduction: each sees what the
// previous ones left, a tool_call stops at the first block. A registration
// put, replaced or deleted applies from the next emission after the
// orchestrator's watch delivers it (moments); [Host.Ready] closes once the
// registrations present at start are in force.
//
// # Concurrency
//
// A handler's function runs in its own goroutine per request: tool_call
// and tool_result requests of a parallel batch arrive concurrently.
// Replicas of one extension serving the same handler name share its
// requests (a NATS queue group).
//
// # Errors
//
// A handler that fails (returns an error, panics, answers with something
// that is not the hook's result, answers late or not at all, or has no
// process serving it) is handled by its failure policy: fail open counts
// it as no opinion, fail closed as the hook's failure (a tool_call is
// blocked, a context chain fails the model call, other hooks skip it).
// Either way the run goes on, the failure is reported as a hook_error
// event of the session, logged, and counted in
// cairn_extension_calls_total{handler,hook,outcome}.
//
// # Durability
//
// Registrations live in the extensions KV bucket and outlive the process
// that made them: [Extension.Close] deletes them, a crash leaves them, and
// the policy decides what calls to a dead handler mean. Lifecycle notices
// ([Extension.Notices]) are core NATS messages, fire and forget: an
// extension that is not listening misses them.
package extension
