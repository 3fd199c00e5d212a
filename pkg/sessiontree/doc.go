// Package sessiontree is the tree a session's entries form and the one
// context reducer that turns a branch of it into what a model is sent. The
// harness builds every model call's context with it, the gateway's
// `/context` shows what it builds, and compaction cuts what it builds; so
// what the model is sent and what `/context` shows are the same messages
// (each through the one conversion to provider messages, agent.ToLLM). It
// depends on package events only.
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
// and the effective model, thinking level and active tools. [BuildParts]
// returns the same context entry by entry (for compaction, which cuts it at
// an entry), [Messages] what a run of entries off a root contributes (a
// branch being left). The rules, pi's buildSessionContext made precise, are
// in docs/context-reducer.md and in the golden cases under testdata/context.
//
// # Ordering
//
// The tree functions and the reducer take entries in log order; "earlier" in
// the tree rules means earlier in it. A path runs from a root to its leaf.
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
// Match errors with errors.Is. A malformed log is a [*TreeError] matching
// [ErrMalformedTree]; a query for an id that is not in the session matches
// [ErrUnknownEntry]; an invalid path or entry given to the reducer is a
// [*ContextError] matching [ErrInvalidPath]. Every error names the
// offending entry and says what was expected.
package sessiontree
