// Package clustertest proves Cairn on a real cluster: a test, behind the build
// tag `cluster` (run it with `make cluster-test`), that builds the pinned
// nats-server and the cairn binary, starts a 3-node NATS cluster and every
// service as separate processes on 127.0.0.1, drives sessions through the
// gateway while it kills (SIGKILL) the leader of the session stream and one
// orchestrator, and then checks the invariants of every session.
//
// # Invariants checked
//
//   - every session settles (its last deciding entry is a settled assistant
//     message or a turn_interrupted entry);
//   - every tool call in the log has exactly one result;
//   - every command the gateway acknowledged is named by exactly one entry;
//   - `cairn audit verify` passes for every session;
//   - the live projector's `cairn projector dump` equals the dump of a fresh
//     `cairn projector rebuild` at the same stream sequence.
//
// # Concurrency
//
// Every process is started by the test and stopped by its PID at the end
// (SIGTERM, then SIGKILL after a grace period), whatever the outcome.
//
// The package has no non-test code; the test is not part of `make test`
// because it takes a minute and a dozen processes.
package clustertest
