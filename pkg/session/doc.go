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
// session (see its documentation for Append, Read and Watch). This section
// belongs to the log's author, who states its full guarantees here:
// optimistic concurrency, idempotent retries, large entries, the hash chain,
// durability.
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
// An [Index] and the values the tree and context functions return are
// immutable once built and may be shared between goroutines. They share
// memory with the entries they were built from (messages, content blocks):
// treat both as read-only.
//
// # Errors
//
// Match errors with errors.Is. The log's sentinels are [ErrConflict],
// [ErrNotFound], [ErrTooLarge] and [ErrCorrupt]. A malformed log is a
// [*TreeError] matching [ErrMalformedTree]; a query for an id that is not in
// the session matches [ErrUnknownEntry]; an invalid path or entry given to
// the reducer is a [*ContextError] matching [ErrInvalidPath]. Every error
// names the offending entry and says what was expected.
package session
