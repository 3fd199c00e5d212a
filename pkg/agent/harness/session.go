package harness

import (
	"context"

	"github.com/cairn-agents/cairn/pkg/events"
)

// Session is where a harness records its session and reads it back. The
// session log of package session and the in-memory agenttest.Session both
// implement it.
type Session interface {
	// Append appends e after the active leaf and returns it as stored. The
	// session fills ParentID and Timestamp, and ID when empty: the harness
	// leaves every ID empty, entry ids are the session's (the
	// orchestrator's derives them from their causes, so that a retried
	// append is recognised). An entry whose ID is already in the session is
	// not appended again (retried appends are no-ops). A `leaf` entry
	// moves the active leaf to its TargetID.
	Append(ctx context.Context, e events.Entry) (events.Entry, error)
	// Path returns the session's `session` header (nil when it has none)
	// and the entries from the root to the active leaf: what the context of
	// the next model call is built from (package sessiontree). The header is
	// never in path.
	Path(ctx context.Context) (header *events.Entry, path []events.Entry, err error)
	// Entry returns the entry with the given id, on any branch; ok is
	// false when the session has none (navigation looks its target up).
	Entry(ctx context.Context, id string) (e events.Entry, ok bool, err error)
}
