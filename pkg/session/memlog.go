package session

import (
	"context"
	"fmt"
	"iter"
	"sync"

	"github.com/cairn-agents/cairn/pkg/events"
)

// DefaultMaxPayload is the in-memory log's entry size limit, NATS's default
// max payload.
const DefaultMaxPayload = 1 << 20

// MemLog is a [Log] in memory with the JetStream log's semantics: one global
// sequence, per-session optimistic concurrency, deduplication by entry id, and
// large parts moved to a [BlobStore] past MaxPayload. The zero value is not
// usable; call [NewMemLog].
type MemLog struct {
	maxPayload int
	blobs      BlobStore

	mu struct {
		sync.Mutex
		recs    []memRec                     // index i holds sequence i+1
		last    map[events.SessionRef]uint64 // session -> sequence of its last entry
		bySess  map[events.SessionRef][]uint64
		ids     map[string]uint64 // events.MsgID -> sequence
		changed chan struct{}     // closed and replaced on every append
	}
}

type memRec struct {
	sid  events.SessionRef
	data []byte
}

// NewMemLog returns an empty in-memory log whose entries may be at most
// maxPayload bytes (0: [DefaultMaxPayload]) before their large parts move to
// blobs (nil: a new [MemBlobs]).
func NewMemLog(maxPayload int, blobs BlobStore) *MemLog {
	if maxPayload <= 0 {
		maxPayload = DefaultMaxPayload
	}
	if blobs == nil {
		blobs = new(MemBlobs)
	}
	l := &MemLog{maxPayload: maxPayload, blobs: blobs}
	l.mu.last = make(map[events.SessionRef]uint64)
	l.mu.bySess = make(map[events.SessionRef][]uint64)
	l.mu.ids = make(map[string]uint64)
	l.mu.changed = make(chan struct{})
	return l
}

// Append implements [Log].
func (l *MemLog) Append(ctx context.Context, sid events.SessionRef, expect uint64, e events.Entry) (Record, error) {
	if err := validateAppend(sid, &e); err != nil {
		return Record{}, err
	}
	data, err := externalize(ctx, e, l.maxPayload, l.blobs)
	if err != nil {
		return Record{}, err
	}
	l.mu.Lock()
	if seq, ok := l.mu.ids[events.MsgID(sid, e.ID)]; ok {
		data := l.mu.recs[seq-1].data
		l.mu.Unlock()
		return l.record(ctx, sid, seq, data)
	}
	if last := l.mu.last[sid]; last != expect {
		l.mu.Unlock()
		return Record{}, fmt.Errorf("%w: session %s: expected last sequence %d, it is %d", ErrConflict, sid, expect, last)
	}
	l.mu.recs = append(l.mu.recs, memRec{sid: sid, data: data})
	seq := uint64(len(l.mu.recs))
	l.mu.last[sid] = seq
	l.mu.bySess[sid] = append(l.mu.bySess[sid], seq)
	l.mu.ids[events.MsgID(sid, e.ID)] = seq
	close(l.mu.changed)
	l.mu.changed = make(chan struct{})
	l.mu.Unlock()
	return l.record(ctx, sid, seq, data)
}

func (l *MemLog) record(ctx context.Context, sid events.SessionRef, seq uint64, data []byte) (Record, error) {
	r, err := decodeRecord(sid, seq, data)
	if err != nil {
		return Record{}, err
	}
	if err := inflate(ctx, &r.Entry, l.blobs); err != nil {
		return Record{}, err
	}
	return r, nil
}

// Read implements [Log].
func (l *MemLog) Read(ctx context.Context, sid events.SessionRef, from uint64) ([]Record, error) {
	if err := sid.Validate(); err != nil {
		return nil, err
	}
	l.mu.Lock()
	seqs := l.mu.bySess[sid]
	type raw struct {
		seq  uint64
		data []byte
	}
	var todo []raw
	for _, s := range seqs {
		if s >= from {
			todo = append(todo, raw{s, l.mu.recs[s-1].data})
		}
	}
	l.mu.Unlock()
	out := make([]Record, 0, len(todo))
	for _, r := range todo {
		rec, err := l.record(ctx, sid, r.seq, r.data)
		if err != nil {
			return nil, err
		}
		out = append(out, rec)
	}
	return out, nil
}

// Watch implements [Log].
func (l *MemLog) Watch(ctx context.Context, sid events.SessionRef, from uint64) iter.Seq2[Record, error] {
	return func(yield func(Record, error) bool) {
		if sid != (events.SessionRef{}) {
			if err := sid.Validate(); err != nil {
				yield(Record{}, err)
				return
			}
		}
		next := max(from, 1)
		for {
			l.mu.Lock()
			var batch []memRec
			first := next
			for ; next <= uint64(len(l.mu.recs)); next++ {
				batch = append(batch, l.mu.recs[next-1])
			}
			changed := l.mu.changed
			l.mu.Unlock()
			for i, m := range batch {
				if sid != (events.SessionRef{}) && m.sid != sid {
					continue
				}
				rec, err := l.record(ctx, m.sid, first+uint64(i), m.data)
				if !yield(rec, err) || err != nil {
					return
				}
			}
			select {
			case <-ctx.Done():
				yield(Record{}, ctx.Err())
				return
			case <-changed:
			}
		}
	}
}
