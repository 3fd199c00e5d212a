// Package follow reads a JetStream stream in order, from a stream sequence
// on, and keeps reading when the NATS node serving it is lost and stays down.
//
// nats.go's ordered consumer is meant for this, but on a cluster it can stop
// for good: when its client reconnects after a node is killed, it recreates
// its consumer at once, and the meta leader, which still counts the dead node
// as a live peer for a few seconds, may place that R1 consumer on it. The
// client then retries the creation under the same name forever, the
// assignment stays on the dead peer, and nothing is delivered again until
// the node comes back (measured: about one reset in ten right after a kill -9
// on a 3-node cluster; docs/operations.md). A [Follower] opens each consumer
// under a fresh name with a bounded wait, so the next attempt is placed anew.
//
// # Ordering
//
// fn sees the stream's messages (those matching the filter) in stream order,
// each once: a Follower tracks the next stream sequence itself, starts every
// consumer there, and drops a consumer whose deliveries skip one (an AckNone
// delivery lost while the client was reconnecting) to open another at the
// same place.
//
// # Concurrency
//
// fn is called from one goroutine at a time and never after [Follower.Stop]
// returns. fn must not call Stop.
//
// # Durability
//
// Nothing is acknowledged or stored: a Follower's position lives in memory.
// Its consumers are R1, in memory, and removed by the server after a minute
// without a client (those left on a dead node go when it returns).
//
// # Errors
//
// [Start] fails when the stream does not exist, when its look-up gets no
// answer within OpenTimeout (context.DeadlineExceeded: JetStream is electing a
// leader; the caller may try again), or the configuration is wrong. Afterwards every failure (a lost node, a deleted consumer, a
// reconnect, missed heartbeats) makes the Follower open a new consumer, with
// backoff, until it succeeds or it is stopped; each is logged.
package follow
