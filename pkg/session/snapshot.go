package session

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cairn-agents/cairn/pkg/events"
)

// A snapshot is a prefix of one session's log kept as one object, named by
// the session's <tenant>.<sid>, in the snapshots bucket: one line per entry, the stream
// sequence, a space, and the stored bytes. Objects are stored contiguously,
// so reading one costs the same whatever else the session stream holds; only
// the entries after it are read from the stream. Snapshots are a cache: a
// reader checks that the first entry after a snapshot chains to its last one
// and ignores a snapshot that does not fit the log.

// loadSnapshot returns the records of sid's snapshot (nil if it has none).
func (l *JetStreamLog) loadSnapshot(ctx context.Context, sid events.SessionRef) ([]Record, error) {
	var data []byte
	err := l.retry(ctx, func(ctx context.Context) error {
		var err error
		data, err = l.snaps.GetBytes(ctx, sid.String())
		return err
	})
	if errors.Is(err, jetstream.ErrObjectNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("session: read snapshot of %s: %w", sid, err)
	}
	recs, err := parseSnapshot(sid, data)
	if err != nil {
		return nil, nil // a damaged cache is no cache
	}
	return recs, nil
}

func parseSnapshot(sid events.SessionRef, data []byte) ([]Record, error) {
	var seqs []uint64
	var raws [][]byte
	for len(data) > 0 {
		line, rest, _ := bytes.Cut(data, []byte{'\n'})
		data = rest
		num, entry, ok := bytes.Cut(line, []byte{' '})
		if !ok {
			return nil, fmt.Errorf("%w: snapshot of %s: line without a sequence", ErrCorrupt, sid)
		}
		seq, err := strconv.ParseUint(string(num), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%w: snapshot of %s: bad sequence %q", ErrCorrupt, sid, num)
		}
		if n := len(seqs); n > 0 && seqs[n-1] >= seq {
			return nil, fmt.Errorf("%w: snapshot of %s: sequence %d after %d", ErrCorrupt, sid, seq, seqs[n-1])
		}
		seqs = append(seqs, seq)
		raws = append(raws, entry)
	}
	recs, err := decodeRecords(sid, seqs, raws)
	if err != nil {
		return nil, err
	}
	for i := 1; i < len(recs); i++ {
		if recs[i].Entry.ParentDigest != recs[i-1].Digest {
			return nil, fmt.Errorf("%w: snapshot of %s: chain broken at sequence %d", ErrCorrupt, sid, recs[i].Seq)
		}
	}
	return recs, nil
}

// WriteSnapshot stores recs, which must be the session's records from its
// first entry on, in order, as its snapshot. A writer that holds the whole
// session in memory may call it now and then so that cold loads stay fast;
// reads write one themselves when they find a long tail after the last.
func (l *JetStreamLog) WriteSnapshot(ctx context.Context, sid events.SessionRef, recs []Record) error {
	if l.snaps == nil || len(recs) == 0 {
		return nil
	}
	var b bytes.Buffer
	for _, r := range recs {
		b.WriteString(strconv.FormatUint(r.Seq, 10))
		b.WriteByte(' ')
		b.Write(r.Data)
		b.WriteByte('\n')
	}
	return l.retry(ctx, func(ctx context.Context) error {
		_, err := l.snaps.Put(ctx, jetstream.ObjectMeta{Name: sid.String()}, io.NopCloser(bytes.NewReader(b.Bytes())))
		return err
	})
}

func (l *JetStreamLog) writeSnapshot(ctx context.Context, sid events.SessionRef, recs []Record) error {
	return l.WriteSnapshot(ctx, sid, recs)
}
