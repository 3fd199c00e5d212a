package session_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cairn-agents/cairn/internal/kittest"
	"github.com/cairn-agents/cairn/internal/natstest"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/session"
	"github.com/cairn-agents/cairn/pkg/session/logtest"
)

// The log deduplicates by entry id. An append that timed out may have been
// stored; a writer that then appends an entry with the same id but other
// bytes (rebuilt with a new timestamp, a reply generated again, or a second
// writer deriving the same id) must not be told its bytes are stored, or it
// chains the next entry to bytes the log does not hold: the hash chain breaks
// and the tool calls it dispatches are not the ones in the log.

// TestSameIDOtherBytesR1 runs the case on one node, where a retried write
// comes back as a wrong last sequence.
func TestSameIDOtherBytesR1(t *testing.T) {
	s := natstest.RunServer(t)
	_, js := natstest.JetStream(t, s.Server)
	l, err := session.NewJetStreamLog(t.Context(), js)
	if err != nil {
		t.Fatal(err)
	}
	testSameIDOtherBytes(t, l, nil)
}

// TestSameIDOtherBytesR3 runs it on a 3-node cluster, where a retried write
// comes back as a duplicate ack, and kills the stream's leader between the
// lost acknowledgement and the retry, as in a leader election.
func TestSameIDOtherBytesR3(t *testing.T) {
	c := natstest.RunCluster(t, 3)
	_, js := c.JetStream()
	// A cluster just formed may not place an R3 stream yet ("no suitable
	// peers"): ask again for a while.
	var l *session.JetStreamLog
	kittest.Eventually(t, 60*time.Second, "a session log on the cluster", func() (err error) {
		l, err = session.NewJetStreamLog(t.Context(), js, session.WithReplicas(3))
		return err
	})
	killed := false
	testSameIDOtherBytes(t, l, func() {
		if i := c.StreamLeader(events.Names{}.SessionsStream()); i >= 0 {
			c.Kill(i)
			killed = true
		}
	})
	if !killed {
		t.Fatal("no leader of the sessions stream to kill")
	}
}

func testSameIDOtherBytes(t *testing.T, l *session.JetStreamLog, between func()) {
	ctx := t.Context()
	t.Run("Log", func(t *testing.T) {
		sid := logtest.SessionID("sameid")
		head := logtest.AppendChain(ctx, t, l, events.DefaultRef(sid), nil, 1)[0]
		a := logtest.UserEntry("reply", head.Entry.ID, "calls tool A")
		a.ParentDigest = head.Digest
		ra, err := l.Append(ctx, events.DefaultRef(sid), head.Seq, a)
		if err != nil {
			t.Fatal(err)
		}
		if between != nil {
			between()
			between = nil
		}
		b := logtest.UserEntry("reply", head.Entry.ID, "calls tool B")
		b.ParentDigest = head.Digest
		rb, err := l.Append(ctx, events.DefaultRef(sid), head.Seq, b)
		if !errors.Is(err, session.ErrConflict) {
			t.Fatalf("append of id %q with other bytes = seq %d digest %s, %v; want ErrConflict (stored: seq %d digest %s)",
				b.ID, rb.Seq, rb.Digest, err, ra.Seq, ra.Digest)
		}
		// The same bytes again are a retry: the original record.
		again, err := l.Append(ctx, events.DefaultRef(sid), head.Seq, a)
		if err != nil || again.Seq != ra.Seq || again.Digest != ra.Digest {
			t.Fatalf("retry with the same bytes = seq %d digest %s, %v; want seq %d digest %s", again.Seq, again.Digest, err, ra.Seq, ra.Digest)
		}
		recs, err := l.Read(ctx, events.DefaultRef(sid), 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) != 2 || recs[1].Digest != ra.Digest {
			t.Fatalf("log holds %d records, want the header and the first reply", len(recs))
		}
	})
	t.Run("Writer", func(t *testing.T) {
		// The writer's view: an append times out but is stored; the owner
		// builds its entry again (a new timestamp is enough) and appends it
		// under the same id, then goes on.
		lossy := &ackLosing{Log: l}
		sid := logtest.SessionID("writer")
		s, err := session.Create(ctx, lossy, events.Entry{ID: sid})
		if err != nil {
			t.Fatal(err)
		}
		reply := func(stamp string) events.Entry {
			e := logtest.UserEntry("reply", "", "the reply")
			e.ParentID, e.Timestamp = nil, stamp
			return e
		}
		lossy.loseNext()
		if _, err := s.Append(ctx, reply("2026-11-30T02:00:00.000Z")); !errors.Is(err, errAckLost) {
			t.Fatalf("first append: %v, want the lost ack", err)
		}
		if between != nil {
			between()
		}
		_, err = s.Append(ctx, reply("2026-11-30T02:00:03.000Z"))
		if !errors.Is(err, session.ErrConflict) {
			t.Fatalf("the rebuilt entry under the stored id: %v, want ErrConflict", err)
		}
		// The owner reloads and goes on from what the log holds.
		s, err = session.Load(ctx, l, events.DefaultRef(sid))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Append(ctx, logtest.UserEntry("next", "", "after the reply")); err != nil {
			t.Fatal(err)
		}
		recs, err := l.Read(ctx, events.DefaultRef(sid), 0)
		if err != nil {
			t.Fatal(err)
		}
		if probs := session.VerifyChain(recs); len(probs) != 0 {
			t.Fatalf("hash chain broken: %v", probs[0])
		}
		if len(recs) != 3 || recs[1].Entry.Timestamp != "2026-11-30T02:00:00.000Z" {
			t.Fatalf("log holds %d records (reply stamped %q), want header, the first reply, next", len(recs), recs[1].Entry.Timestamp)
		}
	})
}

var errAckLost = errors.New("test: acknowledgement lost")

// ackLosing is a Log that, once armed, stores the next append and then
// reports a timeout, as a publish whose ack was lost in a leader election.
type ackLosing struct {
	session.Log
	mu   sync.Mutex
	lose bool
}

func (a *ackLosing) loseNext() {
	a.mu.Lock()
	a.lose = true
	a.mu.Unlock()
}

func (a *ackLosing) Append(ctx context.Context, sid events.SessionRef, expect uint64, e events.Entry) (session.Record, error) {
	rec, err := a.Log.Append(ctx, sid, expect, e)
	a.mu.Lock()
	lose := a.lose
	a.lose = false
	a.mu.Unlock()
	if err == nil && lose {
		return session.Record{}, errors.Join(errAckLost, context.DeadlineExceeded, jetstream.ErrNoStreamResponse)
	}
	return rec, err
}
