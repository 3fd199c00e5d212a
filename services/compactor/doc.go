// Package compactor runs compaction workers: they take compaction and
// branch summary requests from the CAIRN_COMPACTIONS work queue, have the
// request's model write the summary (pkg/compaction), and store the answer
// in CAIRN_RESULTS for the session's owner, which appends the entry
// (DESIGN §1, §5; the protocol is pkg/compactbus).
//
// Any number of compactors share one durable consumer, so they scale
// horizontally like toolrunners, each running up to Concurrency summaries
// at once.
//
// With HTTPAddr set it serves /healthz, /readyz and /metrics
// (cairn_compactor_summaries_total{outcome}, cairn_compactor_summary_seconds,
// cairn_compactor_tokens_total{direction}, cairn_compactor_running).
//
// # Durability
//
// A request is acknowledged only after its result is stored. While the
// model writes, the worker sends in-progress acknowledgements every third
// of AckWait; a worker that dies (kill -9) stops them, and the request is
// redelivered to another worker after AckWait. A retryable provider error
// hands the request back with a delay; after MaxDeliveries deliveries, or
// on any other error, the result carries the error.
//
// # Concurrency
//
// Run owns every goroutine it starts and waits for them. On shutdown it
// stops taking requests, lets running summaries finish for
// ShutdownTimeout, then cancels them and hands their requests back (the
// work loop is pkg/workpool's, shared with the toolrunners).
//
// # Errors
//
// [Config.Validate] names the first wrong field; Run fails when NATS or
// the streams cannot be reached at start.
package compactor
