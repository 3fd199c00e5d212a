// Package session is Cairn's session log and what is built on it: the
// append-only log of session entries (DESIGN §2–3) over JetStream and in
// memory, the session operations (create, append, load, move, label, fork),
// the tree the entries form, and the context reducer that turns one branch
// of that tree into what is sent to a model.
//
// # The tree
//
// A session's entries, in log order, form a tree. The `session` header comes
// first and is not a node; every other entry is a node whose parentId is nil
// (a root) or names an earlier entry. [NewIndex] validates a log (duplicate
// ids, parents that are not earlier entries, bad `leaf` and `label` targets)
// and answers the questions asked of a tree: an entry by id, the path from a
// root down to an entry, the children of an entry, the labels (the last
// `label` entry per target wins; an empty label clears) and the active leaf.
//
// The active leaf is the position the next entry is appended under, and the
// result of replaying the log: every tree entry moves the position to itself,
// except a `leaf` entry, which moves it to its targetId (nil = before the
// first entry, so the next entry is a new root). Navigation is therefore
// durable: it is a `leaf` entry in the log, never a memory-only cursor.
//
// # The context
//
// [BuildContext] is the reducer (pure, no I/O): given the session header and
// the entries on a path from a root to a leaf, it returns the messages to send
// and the effective model, thinking level and active tools. The rules, pi's
// buildSessionContext made precise, are in docs/context-reducer.md and in
// the golden cases under testdata/context.
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
// stream sequence) is the global order across sessions. The tree functions
// and the reducer take entries in that log order; "earlier" in the tree
// rules means earlier in it.
//
// # Concurrency
//
// Logs are safe for concurrent use. A [Session] is not: it has one owner,
// the session's single writer. An [Index] and the values the tree and
// context functions return are immutable once built and may be shared
// between goroutines. They share
// memory with the entries they were built from (messages, content blocks):
// treat both as read-only.
//
// # Errors
//
// Match errors with errors.Is. The log's sentinels are [ErrConflict],
// [ErrNotFound], [ErrTooLarge], [ErrCorrupt] (a [*ChainError] matches it)
// and [ErrDuplicate]; invalid ids and fields are [events.FieldError]s. A malformed log is a
// [*TreeError] matching [ErrMalformedTree]; a query for an id that is not in
// the session matches [ErrUnknownEntry]; an invalid path or entry given to
// the reducer is a [*ContextError] matching [ErrInvalidPath]. Every error
// names the offending entry and says what was expected.
package session
