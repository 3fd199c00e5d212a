package projector

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/services/projector/internal/store"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/nats-io/nats.go/jetstream"
)

// ErrSessionNotFound: the log holds no entry of the session.
var ErrSessionNotFound = errors.New("projector: session not found in the log")

// ReplayPoint says where a replay stops: after the entry at stream sequence
// Seq, and before the first entry timestamped after Time. Zero fields do not
// bound; the zero value replays the whole session.
type ReplayPoint struct {
	Seq  uint64
	Time time.Time
}

// ReplayedEntry is one entry of a replayed session.
type ReplayedEntry struct {
	Seq   uint64          `json:"seq"`
	Entry json.RawMessage `json:"entry"`
}

// Replayed is a session as it was at a point of its log.
type Replayed struct {
	Summary Summary         `json:"summary"`
	Tree    Tree            `json:"tree"`
	Entries []ReplayedEntry `json:"entries"`
}

// Replay reads session sid's subject from the log directly (no read model
// involved) up to at, and reduces it with the projector's own rules in an
// in-memory database.
func Replay(ctx context.Context, js jetstream.JetStream, prefix string, sid events.SessionRef, at ReplayPoint) (Replayed, error) {
	if err := sid.Validate(); err != nil {
		return Replayed{}, err
	}
	names := events.Names{Prefix: prefix}
	stream, err := js.Stream(ctx, names.SessionsStream())
	if err != nil {
		return Replayed{}, fmt.Errorf("projector: stream %s: %w", names.SessionsStream(), err)
	}
	subject := names.SessionSubject(sid)
	lastMsg, err := stream.GetLastMsgForSubject(ctx, subject)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return Replayed{}, fmt.Errorf("%w: %s", ErrSessionNotFound, sid.ID)
	}
	if err != nil {
		return Replayed{}, fmt.Errorf("projector: last entry of %s: %w", sid, err)
	}
	last := lastMsg.Sequence
	if at.Seq != 0 && at.Seq < last {
		last = at.Seq
	}
	db, err := store.Open("replay", store.Options{FS: vfs.NewMem(), MemTableSize: 4 << 20})
	if err != nil {
		return Replayed{}, err
	}
	// In memory and dropped on return: closing loses nothing worth an error.
	defer func() { _ = db.Close() }()
	w, err := db.NewWriter()
	if err != nil {
		return Replayed{}, err
	}
	defer func() { _ = w.Close() }()
	err = readLogUntil(ctx, stream, subject, w, 256, logRead{}, func(m jetstream.Msg, seq, pending uint64) (bool, bool) {
		if seq > last || !at.Time.IsZero() && entryAfter(m.Data(), at.Time) {
			return true, true
		}
		return seq == last || pending == 0, false
	})
	if err != nil {
		return Replayed{}, err
	}
	var out Replayed
	if out.Summary, err = db.Session(sid); errors.Is(err, store.ErrNotFound) {
		return Replayed{}, fmt.Errorf("%w: %s has no entry before the replay point", ErrSessionNotFound, sid.ID)
	} else if err != nil {
		return Replayed{}, err
	}
	if out.Tree, err = db.Tree(sid); err != nil {
		return Replayed{}, err
	}
	out.Entries = []ReplayedEntry{}
	err = db.Entries(sid, 0, 0, func(seq uint64, data []byte) error {
		out.Entries = append(out.Entries, ReplayedEntry{Seq: seq, Entry: append(json.RawMessage(nil), data...)})
		return nil
	})
	return out, err
}

// entryAfter reports whether the entry in data is timestamped after t. An
// entry whose time cannot be read is not after anything.
func entryAfter(data []byte, t time.Time) bool {
	var e struct {
		Timestamp string `json:"timestamp"`
	}
	if json.Unmarshal(data, &e) != nil {
		return false
	}
	ts, err := time.Parse(time.RFC3339Nano, e.Timestamp)
	return err == nil && ts.After(t)
}
