// Package store holds the projector's read models in one Pebble database: the
// key layout (documented in docs/read-models.md), the rules that reduce session
// entries into models, and the reads the queries need. It knows nothing of
// NATS: entries come in as (stream sequence, subject, data).
//
// # Ordering
//
// [Writer.Apply] must be called in stream order. An entry whose sequence is not
// above the applied sequence is ignored, so a redelivery is harmless. The
// models depend only on the entries and their order, never on the wall clock
// or on batch boundaries: the same log gives the same keys and values whatever
// the batch size.
//
// # Durability
//
// [Writer.Commit] writes one Pebble batch holding the models' changes and the
// sequence of the last entry they cover (key meta/applied). Either both are
// in the database after a crash or neither is. [Writer.CommitAsync] gives
// the same guarantee; batches commit in order, each after the one before. Commits do not fsync: the log
// is the source of truth, and a projector that lost its last batches to a
// machine crash resumes from the sequence it finds.
//
// # Concurrency
//
// A [Writer] belongs to one goroutine. [Writer.CommitAsync] commits a batch
// on a goroutine of its own while the writer fills the next; one batch at a
// time is in flight, [Writer.Sync] and [Writer.Close] wait for it, and the
// writer's own reads of the database wait for it first. Reads ([DB] query methods) are safe for
// concurrent use with each other and with the writer; each read sees a
// consistent snapshot only within one call.
//
// # Errors
//
// An entry that does not decode is not an error of the writer: it is recorded
// under bad/ with its reason and counted, and projection goes on. Query
// methods return [ErrNotFound] for an unknown session and [*InvalidError] for
// a malformed cursor.
package store
