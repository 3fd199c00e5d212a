// Package toolbus is the tool protocol of Cairn over NATS JetStream
// (docs/protocol.md): dispatching tool calls, receiving their results,
// cancelling a session's running calls, the tool registry, and serving tools
// as a worker. The toolrunner service serves the built-in tools with it; any
// team serves its own tools the same way:
//
//	nc, _ := nats.Connect(url)
//	bus, _ := toolbus.New(nc, events.Names{})
//	err := bus.Serve(ctx, toolbus.Worker{Pool: "acme", Tools: []tool.Tool{myTool{}}})
//
// On the calling side, [Bus.Dispatch] publishes a call, [Bus.ConsumeResults]
// reads results, [Bus.Cancel] cancels a session's running calls, and
// [Remote] wraps a registered tool as a [tool.Tool] that runs on the bus.
//
// Calls go to the work-queue stream CAIRN_TOOLS on cairn.tool.<pool>.<tenant>.<tool>;
// every worker of a pool shares one durable pull consumer, so a call is
// delivered to one worker at a time. Results go to the stream CAIRN_RESULTS
// on cairn.result.<tenant>.<sid>; partial updates go to cairn.events.<tenant>.<sid> as
// tool_execution_update events; cancellation is core NATS on
// cairn.cancel.<tenant>.<sid>.
//
// # Ordering
//
// Calls of a pool are handed out in stream order but run concurrently, so
// results may come back in any order; the receiver orders them by tool call
// id. Results of one session are in publish order on its subject.
//
// # Concurrency
//
// A Bus is safe for concurrent use. A worker runs at most Worker.Concurrency
// calls at once; Tool.Execute is called from several goroutines.
//
// # Durability
//
// A call is acknowledged only after its result is stored in CAIRN_RESULTS,
// so a worker that dies mid-call loses nothing: the call is redelivered after
// the consumer's AckWait. Long calls keep their message with in-progress
// acknowledgements every AckWait/3.
//
// Exactly once where it matters: before executing a call of a non-idempotent
// tool, a worker records its start in the KV bucket cairn_toolstarts (a
// create, so one worker wins) and marks it done once the result is stored. A
// redelivered call whose start is recorded is not run again: it gets an error
// result with Interrupted set, or, if marked done, is acknowledged without
// running. Calls of idempotent tools skip the record and simply run again on
// redelivery (the tool's spec on the worker decides, not the call). Results
// carry Nats-Msg-Id = [ResultMsgID], so a result published twice within the
// results stream's duplicate window (10 minutes by default) is stored once:
// every call gets exactly one result.
//
// # Errors
//
// Nothing a caller sends crashes a worker or loops forever: a call that cannot
// be decoded but names its session and call id gets an error result; one that
// does not is terminated with a logged reason. An unknown tool, a workspace
// outside the root, a timeout, an abort or a failing tool each give an error
// result. A call delivered more than Worker.MaxDeliveries times gets an error
// result instead of another run. [Provision], [Check], [Bus.Register] and
// [Bus.Start] wait while JetStream cannot answer yet (no responders, no
// reply, 503: a stream or bucket still electing its leader, right after it
// was created or while a node is lost) until ctx ends; an answer that will
// not change, such as a missing stream or bucket, returns at once. Sentinel errors: [ErrNotProvisioned],
// [ErrConflict], [ErrNotFound]; configuration mistakes are [*events.FieldError].
package toolbus
