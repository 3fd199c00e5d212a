// Package clustertest proves Cairn on a real cluster: a test, behind the build
// tag `cluster` (run it with `make cluster-test`, part of `make test` and so
// of CI), that builds the pinned nats-server and the cairn binary, starts a
// 3-node NATS cluster (TLS for clients and verified routes, a NATS user per
// service kind, all made by `cairn provision users` and `certs`) and every
// service as separate processes on 127.0.0.1, each as its own NATS user
// (two orchestrators, three toolrunners, two compactors, the projector, the
// gateway), drives sessions through the gateway while it kills (SIGKILL) the
// leader of the session stream, which stays down to the end, and one
// orchestrator, and then checks the invariants of every session. The model
// is the demo script with a small context window, so sessions compact on
// their own; some also ask to.
//
// # Invariants checked
//
//   - every session settles (its last deciding entry is a settled assistant
//     message or a turn_interrupted entry);
//   - every tool call in the log has exactly one result;
//   - every command the gateway acknowledged is named by exactly one entry;
//   - every compact command is applied by exactly one compaction entry
//     (or refused as unavailable, counted, when its owner lost the session
//     meanwhile), every compaction entry was answered by a compactor, and
//     no answer has more than one entry (an answer whose requester lost the
//     session meanwhile has none; counted);
//   - `cairn audit verify` passes for every session;
//   - the live projector's `cairn projector dump` equals the dump of a fresh
//     `cairn projector rebuild` at the same stream sequence.
//   - no NATS server refused a permission to any service (its log and the
//     services' logs have no permissions violation).
//
// # Concurrency
//
// Every process is started by the test and stopped by its PID at the end
// (SIGTERM, then SIGKILL after a grace period), whatever the outcome.
//
// The package has no non-test code.
package clustertest
