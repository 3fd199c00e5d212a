// Package compactbus is the compaction protocol over JetStream: the
// session's owner asks for a summary, any compactor worker writes it, and
// the answer comes back durably (DESIGN §1, §5).
//
// A [Request] goes to cairn.compact.<tenant>.<sid> in the CAIRN_COMPACTIONS work
// queue (created by [Provision]); the workers of services/compactor share
// one durable pull consumer ([provision.CompactorConsumer]) and take each
// request once. pkg/provision holds the stream and consumer configurations.
// A worker publishes its [Result] ("kind":"compaction", so tool result
// decoding skips it) to cairn.result.<tenant>.<sid> in CAIRN_RESULTS, then
// acknowledges the request. [Client.Summarize] publishes a request and
// waits for its result.
//
// # Ordering
//
// Requests of one session are independent; a session's owner asks for one
// summary at a time.
//
// # Durability
//
// A request is stored before Summarize waits; one whose worker dies is
// redelivered after the consumer's AckWait to another worker (workers send
// in-progress acknowledgements while the model writes). Both messages carry
// a Nats-Msg-Id derived from the request id, so a retried request or result
// within the streams' duplicate window is stored once, and a request asked
// again after the owner restarted (its publish comes back a duplicate) finds
// the result already stored (the client then reads results back
// [Lookback]; a fresh request reads only new ones). The owner alone appends the
// compaction entry, so exactly one lands however often a summary is
// written.
//
// # Concurrency
//
// A Client is safe for concurrent use.
//
// # Errors
//
// Bad requests and results are refused with an *events.FieldError naming
// the field. A worker's failure comes back as a *[RemoteError]; a missing
// stream is [ErrNotProvisioned]; a platform where no compactor ever started
// is [ErrNoCompactor] (at once, rather than a wait for nobody).
package compactbus
