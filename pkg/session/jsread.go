package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/synadia-io/orbit.go/jetstreamext"

	"github.com/cairn-agents/cairn/pkg/events"
)

// readBatch is how many messages one batched direct get asks for.
const readBatch = 512

// Read implements [Log]. A read from the start uses the session's snapshot
// (see docs/session-log.md) and reads only the entries after it from the
// stream; it sees every append acknowledged before it began.
func (l *JetStreamLog) Read(ctx context.Context, sid events.SessionRef, from uint64) ([]Record, error) {
	if err := sid.Validate(); err != nil {
		return nil, err
	}
	subj := l.opts.names.SessionSubject(sid)
	last, err := l.leaderLast(ctx, subj)
	if err != nil || last == 0 || last < from {
		return nil, err
	}
	var recs []Record
	start := max(from, 1)
	if start == 1 && l.snaps != nil {
		// A snapshot is a cache: one that cannot be read now (a timeout
		// under load, a damaged object) is a miss, and the stream answers.
		snap, err := l.loadSnapshot(ctx, sid)
		if err != nil && ctx.Err() != nil {
			return nil, err
		}
		if n := len(snap); err == nil && n > 0 && snap[n-1].Seq <= last {
			recs, start = snap, snap[n-1].Seq+1
		}
	}
	tail, err := l.readStream(ctx, sid, start, last)
	if err != nil {
		return nil, err
	}
	if n := len(recs); n > 0 && (len(tail) > 0 && tail[0].Entry.ParentDigest != recs[n-1].Digest ||
		len(tail) == 0 && recs[n-1].Seq != last) {
		// The snapshot is not a prefix of this log (the stream was
		// replaced?): ignore it.
		recs = nil
		if tail, err = l.readStream(ctx, sid, 1, last); err != nil {
			return nil, err
		}
	}
	if l.snaps != nil && from <= 1 && len(tail) >= l.opts.snapshotEvery {
		recs = append(recs, tail...)
		// A snapshot is a cache: failing to write one costs the next
		// reader time, not correctness.
		_ = l.writeSnapshot(ctx, sid, recs)
	} else {
		recs = append(recs, tail...)
	}
	for i := range recs {
		if err := inflate(ctx, &recs[i].Entry, l.blobs); err != nil {
			return nil, err
		}
	}
	return recs, nil
}

// ReadStream reads session sid's entries from the stream alone, ignoring
// snapshots, with blobs restored: what an auditor should look at.
func (l *JetStreamLog) ReadStream(ctx context.Context, sid events.SessionRef) ([]Record, error) {
	if err := sid.Validate(); err != nil {
		return nil, err
	}
	last, err := l.leaderLast(ctx, l.opts.names.SessionSubject(sid))
	if err != nil || last == 0 {
		return nil, err
	}
	recs, err := l.readStream(ctx, sid, 1, last)
	if err != nil {
		return nil, err
	}
	for i := range recs {
		if err := inflate(ctx, &recs[i].Entry, l.blobs); err != nil {
			return nil, err
		}
	}
	return recs, nil
}

// leaderLast asks the stream leader (not a possibly lagging replica) for the
// sequence of the last message on subj; 0 if there is none.
func (l *JetStreamLog) leaderLast(ctx context.Context, subj string) (uint64, error) {
	req, _ := json.Marshal(map[string]string{"last_by_subj": subj})
	api := "$JS.API.STREAM.MSG.GET." + l.opts.names.SessionsStream()
	if p := l.js.Options().APIPrefix; p != "" {
		api = p + "STREAM.MSG.GET." + l.opts.names.SessionsStream()
	}
	var seq uint64
	err := l.retry(ctx, func(ctx context.Context) error {
		resp, err := l.js.Conn().RequestWithContext(ctx, api, req)
		if err != nil {
			return err
		}
		var r struct {
			Error   *jetstream.APIError `json:"error"`
			Message *struct {
				Seq uint64 `json:"seq"`
			} `json:"message"`
		}
		if err := json.Unmarshal(resp.Data, &r); err != nil {
			return fmt.Errorf("session: bad reply to %s: %w", api, err)
		}
		if r.Error != nil {
			if r.Error.ErrorCode == jetstream.JSErrCodeMessageNotFound {
				seq = 0
				return nil
			}
			return r.Error
		}
		if r.Message != nil {
			seq = r.Message.Seq
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("session: last sequence of %s: %w", subj, err)
	}
	return seq, nil
}

// readStream reads the raw records of sid from sequence start through last
// with batched direct gets. A replica that has not caught up with last yet
// is asked again until the retry budget runs out.
func (l *JetStreamLog) readStream(ctx context.Context, sid events.SessionRef, start, last uint64) ([]Record, error) {
	subj := l.opts.names.SessionSubject(sid)
	var seqs []uint64
	var raws [][]byte
	deadline := time.Now().Add(l.opts.retryFor)
	for start <= last {
		n := 0
		err := l.retry(ctx, func(ctx context.Context) error {
			it, err := jetstreamext.GetBatch(ctx, l.js, l.opts.names.SessionsStream(), readBatch,
				jetstreamext.GetBatchSeq(start), jetstreamext.GetBatchSubject(subj))
			if err != nil {
				return err
			}
			for m, err := range it {
				if errors.Is(err, jetstreamext.ErrNoMessages) {
					return nil
				}
				if err != nil {
					return err
				}
				if m.Sequence > last {
					return nil
				}
				seqs = append(seqs, m.Sequence)
				raws = append(raws, m.Data)
				start = m.Sequence + 1
				n++
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("session: read %s from sequence %d: %w", sid, start, err)
		}
		if n == 0 && start <= last {
			// A lagging replica answered: wait a little and ask again.
			if time.Now().After(deadline) {
				return nil, fmt.Errorf("session: read %s: sequence %d acknowledged but not readable", sid, last)
			}
			t := time.NewTimer(10 * time.Millisecond)
			select {
			case <-ctx.Done():
				t.Stop()
				return nil, ctx.Err()
			case <-t.C:
			}
		}
	}
	return decodeRecords(sid, seqs, raws)
}

// Watch implements [Log] with an ordered consumer (in memory, removed when
// the loop ends).
func (l *JetStreamLog) Watch(ctx context.Context, sid events.SessionRef, from uint64) iter.Seq2[Record, error] {
	return func(yield func(Record, error) bool) {
		filter := l.opts.names.AllSessions()
		if sid != (events.SessionRef{}) {
			if err := sid.Validate(); err != nil {
				yield(Record{}, err)
				return
			}
			filter = l.opts.names.SessionSubject(sid)
		}
		cfg := jetstream.OrderedConsumerConfig{FilterSubjects: []string{filter}, DeliverPolicy: jetstream.DeliverAllPolicy}
		if from > 1 {
			cfg.DeliverPolicy, cfg.OptStartSeq = jetstream.DeliverByStartSequencePolicy, from
		}
		cons, err := l.js.OrderedConsumer(ctx, l.opts.names.SessionsStream(), cfg)
		if err != nil {
			yield(Record{}, fmt.Errorf("session: watch %q: %w", filter, err))
			return
		}
		msgs, err := cons.Messages()
		if err != nil {
			yield(Record{}, fmt.Errorf("session: watch %q: %w", filter, err))
			return
		}
		defer msgs.Stop()
		stop := context.AfterFunc(ctx, msgs.Stop)
		defer stop()
		for {
			m, err := msgs.Next()
			if err != nil {
				if ctx.Err() != nil {
					err = ctx.Err()
				}
				yield(Record{}, err)
				return
			}
			meta, err := m.Metadata()
			if err != nil {
				yield(Record{}, err)
				return
			}
			msid, ok := events.SessionOf(m.Subject())
			if !ok {
				continue
			}
			rec, err := l.rawRecord(ctx, msid, meta.Sequence.Stream, m.Data())
			if !yield(rec, err) || err != nil {
				return
			}
		}
	}
}

// Sessions lists every session in the log.
func (l *JetStreamLog) Sessions(ctx context.Context) ([]events.SessionRef, error) {
	info, err := l.stream.Info(ctx, jetstream.WithSubjectFilter(l.opts.names.AllSessions()))
	if err != nil {
		return nil, fmt.Errorf("session: list sessions: %w", err)
	}
	ids := make([]events.SessionRef, 0, len(info.State.Subjects))
	for subj := range info.State.Subjects {
		if sid, ok := events.SessionOf(subj); ok {
			ids = append(ids, sid)
		}
	}
	return ids, nil
}
