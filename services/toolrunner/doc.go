// Package toolrunner is the service that executes tool calls: it serves a
// pool's tools on the bus with [toolbus] (CAIRN_TOOLS work queue in, results
// durably to CAIRN_RESULTS) and scales out by running more processes against
// the same pool (DESIGN §2, §7; docs/protocol.md). `cairn toolrunner` runs it.
//
// # Concurrency
//
// One Runner runs at most Config.Concurrency calls at once; any number of
// runners share a pool's durable consumer, so each call goes to one of them.
//
// # Durability
//
// A call is acknowledged only after its result is stored; a runner killed
// mid-call loses nothing (see the Durability section of [toolbus]).
//
// # Errors
//
// [Config.Validate] names the first bad field. Run returns an error only if the
// runner cannot start (NATS unreachable, streams missing, bad workspace root)
// or its HTTP listener fails; a failing tool call becomes an error result.
//
// Shutdown: when Run's context is done the runner stops pulling, lets running
// calls finish for up to Config.ShutdownTimeout, hands the rest back (NAK),
// closes its HTTP server and drains its NATS connection.
package toolrunner
