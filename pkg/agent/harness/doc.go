// Package harness runs the agent loop for one session: it owns the
// session's phase, its queues (steering, follow-up, next-turn), its
// configuration (model, thinking level, tools, system prompt, stream
// options), its held session writes, retries and compaction, and it records
// everything in the session through the small [Session] interface.
//
// The orchestrator runs one Harness per session, on one goroutine that
// calls [Harness.Prompt] (or Continue, Compact, Navigate), while other
// goroutines steer, queue follow-ups, change configuration or abort. Tools,
// providers, models and hooks are supplied by the process; everything else
// comes back from the session when [New] reads it (semi-durable recovery).
//
// # The context
//
// The context of a model call is what package sessiontree's reducer builds
// from the session's header and active path — the one reducer, whose
// result `/context` shows — and the messages of the run so far; the agent
// loop converts it with agent.ToLLM. [New] takes the model, thinking level,
// system prompt and active tools from it too. Every reading of the session
// (at New, after a compaction, a navigation or a failed write) builds it
// again. With [Config].SystemPromptFor the system prompt is built instead
// at the start of every run and at every save point, from the active tools
// then; a prompt that differs from the last one applies from that save
// point's next model call.
//
// # Phases
//
// A harness is idle, or busy in one of turn, compaction, branch_summary or
// retry. Prompt, Continue, Compact and Navigate need idle and otherwise fail
// with [ErrBusy], changing nothing. Steer and FollowUp are accepted at any
// time (they wait in their queue when idle); NextTurn messages at any time.
//
// # Ordering
//
// Every message the loop finishes is appended to the session at its
// message_end, before the event reaches the sink. Session writes asked for
// while busy (configuration changes, [Harness.Append]) are held and flushed
// in the order they were asked, at each save point (after a turn's tool
// results) and when the run settles — always after the agent's own messages
// of that turn. Configuration changed during a turn applies from the next
// save point, never to the request in flight. A run's agent_end reaches the
// sink last, once the harness is idle again and its writes are flushed, so
// a prompt sent upon it is not refused as busy.
//
// # Concurrency
//
// All methods are safe for concurrent use. Prompt, Continue, Compact and
// Navigate run on the calling goroutine and return when the harness is idle
// again. The sink is called one event at a time.
//
// # Durability
//
// A message is durable once its message_end has been delivered (the session
// append happens first). Session writes use ctx without its cancellation,
// so an abort or a cancelled caller never loses a message or a held write;
// a write that fails stays held and stops the run with the error.
//
// # Errors
//
// [ErrBusy] for structural operations while busy; [ErrCancelled] when a hook
// cancels a compaction or a navigation; [ErrNoEntry] for a navigation to an
// entry the session lacks; [ErrDuplicateTool] for a tool set naming a tool
// twice. A context overflow that cannot be recovered from ends the run with
// [ErrOverflowRecovery] (nothing to compact, no compactor, a failed
// compaction) or [ErrOverflow] (still overflowing after the one
// compact-and-retry), recorded as the run's last assistant message and
// carried by a compaction_end event. Other provider failures that end a run
// come back from Prompt classified (llm.KindOf); an aborted run gives a
// KindAborted error.
package harness
