package session

import (
	"context"
	"errors"
	"iter"

	"github.com/cairn-agents/cairn/pkg/events"
)

// Log is the append-only store of session entries: one ordered sequence per
// session, all of them interleaved in one global order.
//
// Sessions are named by [events.SessionRef]: tenant and id.
//
// Append adds e to session sid if the sequence of the session's last entry is
// still expect (0: the session must be empty). It returns the stored record;
// an append of an entry id already in the session at its end (a retry after a
// lost acknowledgement) is a no-op that returns the original record.
// Otherwise a stale expect fails with [ErrConflict].
//
// Read returns the entries of session sid whose sequence is at least from
// (0 or 1: all of them), in order, large parts restored.
//
// Watch yields records as they are appended, from sequence from on (0: from
// the start), for one session or, with the zero SessionRef, for every session in global
// order. It ends when ctx is done (yielding ctx's error) or when the caller
// stops the loop.
type Log interface {
	Append(ctx context.Context, sid events.SessionRef, expect uint64, e events.Entry) (Record, error)
	Read(ctx context.Context, sid events.SessionRef, from uint64) ([]Record, error)
	Watch(ctx context.Context, sid events.SessionRef, from uint64) iter.Seq2[Record, error]
}

// Record is one entry as the log stores it.
type Record struct {
	Session events.SessionRef
	// Seq is the entry's position in the global order (the stream sequence);
	// within a session it only grows.
	Seq uint64
	// Entry is the entry, large parts restored.
	Entry events.Entry
	// Data is the entry's canonical JSON as stored: large parts replaced by
	// blob references. The hash chain covers these bytes.
	Data []byte
	// Digest is [Digest] of Data: the ParentDigest the next entry must carry.
	Digest string
}

// Errors. Match them with errors.Is.
var (
	// ErrConflict: the session's last sequence is no longer the expected one;
	// another writer appended first. The writer must not retry blindly: it has
	// lost the session and should reload it (or drop it).
	ErrConflict = errors.New("session: conflict: the session's last sequence is not the expected one")
	// ErrNotFound: no such session or entry.
	ErrNotFound = errors.New("session: not found")
	// ErrTooLarge: an entry is over the log's limit even with its large
	// parts moved to the blob store.
	ErrTooLarge = errors.New("session: entry too large")
	// ErrCorrupt: stored data does not decode or a blob is missing or does
	// not match its digest.
	ErrCorrupt = errors.New("session: corrupt log data")
)

// validateAppend checks the arguments every Log implementation refuses.
func validateAppend(sid events.SessionRef, e *events.Entry) error {
	if err := sid.Validate(); err != nil {
		return err
	}
	if err := events.ValidateEntryID(e.ID); err != nil {
		return err
	}
	if e.Type == "" {
		return &events.FieldError{Field: "type", Problem: "is required"}
	}
	return nil
}
