// Package agent is the agent loop: it sends a context to a model, runs the
// tool calls of the reply, and goes on until the model stops asking for
// tools and nobody has anything more to say. It has no I/O of its own: the
// model is an [llm.Provider], tools are [tool.Tool]s, hooks come from a
// [hook.Registry], and everything that happens is reported as
// [events.Event]s to a sink. The harness (package harness) drives it with
// queues, persistence, retries and configuration.
//
// # The two loops
//
// The inner loop runs while the last reply called tools or steering
// messages wait. When the agent would stop, follow-up messages (if any)
// start the inner loop again. Steering messages are pulled after a turn's
// tool batch has finished (no tool of the batch is skipped) and before the
// next model call; follow-ups only when the agent would otherwise stop.
//
// # Ordering
//
// Events of one run, in order: agent_start; turn_start; message_start and
// message_end for each prompt message; message_start, message_update...,
// message_end for the assistant reply; for each tool call
// tool_execution_start (in call order), tool_execution_update...,
// tool_execution_end (in the order calls finish); then message_start and
// message_end for each tool result, in call order; turn_end with the turn's
// tool results; then turn_start for the next turn (preceded by message
// events of steering or follow-up messages injected into it), and finally
// agent_end with every message the run added. Sink calls never overlap.
//
// # Concurrency
//
// [Run] runs on the calling goroutine and starts one goroutine per tool call
// of a parallel batch; it waits for all of them before it returns. The sink
// is called from those goroutines too, one call at a time.
//
// # Errors
//
// Nothing a model, tool or hook does crashes the loop. A tool failure
// (unknown tool, bad arguments, blocked call, error, panic) becomes an error
// tool result the model sees. A failed model call becomes an assistant
// message with stop reason error (aborted when ctx is cancelled) and ends
// the run unless [Config.Recover] asks for another try; [Run] then returns
// the error that ended it.
package agent
