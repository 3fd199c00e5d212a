// Package session is Cairn's session log: the append-only log of session
// entries (DESIGN §2–3) over JetStream and in memory, and the session
// operations on it (create, append, load, move, label, fork). The tree the
// entries form and the context reducer are package sessiontree's; a
// [Session] hands out its [sessiontree.Index].
//
// # The log
//
// [Log] is the append-only store of entries, one ordered sequence per
// session. [JetStreamLog] keeps it in the stream CAIRN_SESSIONS, one subject
// per session; [MemLog] keeps it in memory with the same semantics; both
// pass the conformance suite in package logtest. [Session] is a writer's view
// of one session over a Log: create, append, load, path, children, moveTo,
// labels, navigate, fork. Design and measurements: docs/session-log.md.
//
//   - Optimistic concurrency: every append names the sequence of the
//     session's last entry (0: empty). If another writer appended first the
//     append fails with [ErrConflict] and writes nothing; of two concurrent
//     appends with the same expectation exactly one succeeds. A [Session]
//     that got ErrConflict refuses further appends: its owner drops it.
//   - Idempotence: an append carries Nats-Msg-Id <sid>.<entry id>. Retrying an
//     append whose acknowledgement was lost (same entry id, same expected
//     sequence) returns the original record, on R1 and R3 streams alike;
//     the JetStream log retries transient failures (no responders, timeouts
//     during a leader election) that way by itself.
//   - Large entries: an entry over the server's max payload has its largest
//     blocks (image data, long text) moved to the object store bucket
//     cairn_blobs, named by digest; reads restore them.
//   - Hash chain: each entry's ParentDigest is the [Digest] of the stored
//     bytes of the entry before it on the subject. [VerifyChain] finds an
//     edited, removed or reordered entry and names it.
//   - Cold loads: a read from the start uses the session's snapshot (an
//     object in cairn_snapshots) and reads only the entries after it, so it
//     does not slow down as the stream grows.
//
// # Durability
//
// An acknowledged append is in the stream. On one node that means it
// survives a killed process but not a lost machine (the file store syncs
// every two minutes unless the server runs with sync always); on an R3
// stream it survives the loss of one node. Snapshots are a cache and never
// the only copy of anything.
//
// # Ordering
//
// A session's entries keep their append order, and a [Record]'s Seq (the
// stream sequence) is the global order across sessions.
//
// # Concurrency
//
// Logs are safe for concurrent use. A [Session] is not: it has one owner,
// the session's single writer. The index it returns is immutable and may be
// shared between goroutines.
//
// # Errors
//
// Match errors with errors.Is. The log's sentinels are [ErrConflict],
// [ErrNotFound], [ErrTooLarge], [ErrCorrupt] (a [*ChainError] matches it)
// and [ErrDuplicate]; invalid ids and fields are [events.FieldError]s. An
// append naming an entry the session does not have matches [ErrUnknownEntry]
// (the tree's own sentinel); a log whose entries do not form a tree is
// [ErrCorrupt] wrapping the tree's [*sessiontree.TreeError]. Every error
// names the offending entry and says what was expected.
package session
