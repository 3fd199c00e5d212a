package session_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cairn-agents/cairn/internal/natstest"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/session"
)

// benchText makes a user message of about 1 KiB on the wire.
var benchText = strings.Repeat("the quick brown fox jumps over the lazy dog ", 22)

func benchEntry(id string) events.Entry {
	return events.Entry{Type: events.EntryMessage, ID: id, Timestamp: "2026-02-01T10:00:00.000Z",
		Message: &events.Message{Role: events.RoleUser, Content: events.TextContent(benchText)}}
}

// rawAppender publishes pre-encoded bytes to one subject the way the log
// does (Nats-Msg-Id and the expected last subject sequence), but with no
// encoding, digest, validation or bookkeeping: the baseline.
type rawAppender struct {
	js   jetstream.JetStream
	subj string
	sid  string
	last uint64
	data []byte
	n    int
}

func (r *rawAppender) append(ctx context.Context) error {
	r.n++
	msg := &nats.Msg{Subject: r.subj, Data: r.data, Header: nats.Header{
		events.HeaderMsgID: []string{fmt.Sprintf("%s.raw%d", r.sid, r.n)},
	}}
	ack, err := r.js.PublishMsg(ctx, msg, jetstream.WithExpectLastSequencePerSubject(r.last))
	if err != nil {
		return err
	}
	r.last = ack.Sequence
	return nil
}

// logAppender appends through the Log interface alone, keeping only the
// expected sequence and the last digest (what any writer must keep).
type logAppender struct {
	l      session.Log
	sid    string
	last   uint64
	digest string
}

func (a *logAppender) append(ctx context.Context) error {
	e := benchEntry(events.NewID())
	e.ParentDigest = a.digest
	r, err := a.l.Append(ctx, events.DefaultRef(a.sid), a.last, e)
	if err != nil {
		return err
	}
	a.last, a.digest = r.Seq, r.Digest
	return nil
}

func benchLog(b *testing.B) (jetstream.JetStream, *session.JetStreamLog) {
	b.Helper()
	s := natstest.RunServer(b)
	_, js := natstest.JetStream(b, s.Server)
	l, err := session.NewJetStreamLog(context.Background(), js)
	if err != nil {
		b.Fatal(err)
	}
	return js, l
}

// encodedSize is the stored size of a bench entry, so the raw publisher
// sends as many bytes as the log does.
func encodedSize(b *testing.B) []byte {
	l := session.NewMemLog(0, nil)
	rec, err := l.Append(context.Background(), events.DefaultRef("x"), 0, benchEntry("0123456789abcdef"))
	if err != nil {
		b.Fatal(err)
	}
	e := rec.Entry
	e.ParentDigest = session.Digest(nil)
	data, _ := e.MarshalJSON()
	return data
}

// BenchmarkAppendOneSession: sequential appends to one session through
// the Log (log-appends/s) and through the Session writer, which also keeps
// the session in memory (session-appends/s), against raw publishes of the
// same bytes with the same per-subject sequence check, alternating in chunks
// within one run.
func BenchmarkAppendOneSession(b *testing.B) {
	ctx := context.Background()
	js, l := benchLog(b)
	names := events.Names{}
	s, err := session.Create(ctx, l, events.Entry{ID: "one"})
	if err != nil {
		b.Fatal(err)
	}
	la := &logAppender{l: l, sid: "logone"}
	raw := &rawAppender{js: js, subj: names.SessionSubject(events.DefaultRef("rawone")), sid: "rawone", data: encodedSize(b)}
	var rawDur, logDur, sesDur time.Duration
	b.ResetTimer()
	for done := 0; done < b.N; {
		chunk := min(200, b.N-done)
		t0 := time.Now()
		for range chunk {
			if err := raw.append(ctx); err != nil {
				b.Fatal(err)
			}
		}
		t1 := time.Now()
		for range chunk {
			if err := la.append(ctx); err != nil {
				b.Fatal(err)
			}
		}
		t2 := time.Now()
		for range chunk {
			if _, err := s.Append(ctx, benchEntry("")); err != nil {
				b.Fatal(err)
			}
		}
		sesDur += time.Since(t2)
		logDur += t2.Sub(t1)
		rawDur += t1.Sub(t0)
		done += chunk
	}
	reportRatio(b, rawDur, logDur, sesDur, b.N)
}

func reportRatio(b *testing.B, rawDur, logDur, sesDur time.Duration, n int) {
	b.ReportMetric(float64(n)/rawDur.Seconds(), "raw-appends/s")
	b.ReportMetric(float64(n)/logDur.Seconds(), "log-appends/s")
	b.ReportMetric(float64(n)/sesDur.Seconds(), "session-appends/s")
	b.ReportMetric(rawDur.Seconds()/logDur.Seconds(), "log/raw")
	b.ReportMetric(rawDur.Seconds()/sesDur.Seconds(), "session/raw")
}

// BenchmarkAppend1000Sessions: 1,000 writers, one per session, each
// appending sequentially (the orchestrator's shape) through the Log and
// through Session writers, against 1,000 raw publishers doing the same with
// the same bytes and sequence check.
func BenchmarkAppend1000Sessions(b *testing.B) {
	const sessions = 1000
	ctx := context.Background()
	js, l := benchLog(b)
	names := events.Names{}
	data := encodedSize(b)
	writers := make([]*session.Session, sessions)
	logs := make([]*logAppender, sessions)
	raws := make([]*rawAppender, sessions)
	for i := range sessions {
		sid := fmt.Sprintf("s%04d", i)
		var err error
		if writers[i], err = session.Create(ctx, l, events.Entry{ID: sid}); err != nil {
			b.Fatal(err)
		}
		raws[i] = &rawAppender{js: js, subj: names.SessionSubject(events.DefaultRef("raw" + sid)), sid: "raw" + sid, data: data}
		logs[i] = &logAppender{l: l, sid: "log" + sid}
	}
	per := max(1, b.N/sessions)
	run := func(op func(i int) error) time.Duration {
		var wg sync.WaitGroup
		errs := make([]error, sessions)
		t0 := time.Now()
		for i := range sessions {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range per {
					if err := op(i); err != nil {
						errs[i] = err
						return
					}
				}
			}()
		}
		wg.Wait()
		d := time.Since(t0)
		for _, err := range errs {
			if err != nil {
				b.Fatal(err)
			}
		}
		return d
	}
	b.ResetTimer()
	var rawDur, logDur, sesDur time.Duration
	for range 2 {
		rawDur += run(func(i int) error { return raws[i].append(ctx) })
		logDur += run(func(i int) error { return logs[i].append(ctx) })
		sesDur += run(func(i int) error { _, err := writers[i].Append(ctx, benchEntry("")); return err })
	}
	reportRatio(b, rawDur, logDur, sesDur, 2*per*sessions)
}

// The cold-load stream: 1M entries of 10,000 sessions, 20 of which have
// 1,000 entries, all interleaved.
const (
	coldTotal    = 1_000_000
	coldSessions = 10_000
	coldBig      = 20
	coldBigLen   = 1000
	coldLoads    = 200
)

// fillCold publishes the stream asynchronously: every entry carries its
// parent's digest, like a log written by Session writers. Then it reads each
// big session once (which writes its snapshot, as any cold read of a long
// tail does) and appends a further 10% of traffic with 50 entries of each big
// session in it, so every load reads a snapshot and a tail from the stream.
func fillCold(ctx context.Context, js jetstream.JetStream, l *session.JetStreamLog) ([]string, error) {
	names := events.Names{}
	type state struct {
		n      int
		digest string
		parent string
	}
	st := make([]state, coldSessions)
	sid := func(i int) string { return fmt.Sprintf("cold%05d", i) }
	var big []string
	for i := range coldBig {
		big = append(big, sid(i))
	}
	publish := func(i int) error {
		s := &st[i]
		var e events.Entry
		if s.n == 0 {
			e = events.Entry{Type: events.EntrySession, Version: 3, ID: sid(i), Timestamp: "2026-02-01T10:00:00.000Z"}
		} else {
			e = benchEntry(fmt.Sprintf("e%d", s.n))
			e.Message.Content = events.TextContent(benchText[:300])
			if s.parent != "" {
				p := s.parent
				e.ParentID = &p
			}
			s.parent = e.ID
		}
		e.V = events.SchemaVersion
		e.ParentDigest = s.digest
		data, err := e.MarshalJSON()
		if err != nil {
			return err
		}
		s.digest = session.Digest(data)
		s.n++
		msg := &nats.Msg{Subject: names.SessionSubject(events.DefaultRef(sid(i))), Data: data, Header: nats.Header{
			events.HeaderMsgID: []string{events.MsgID(events.DefaultRef(sid(i)), e.ID)}, session.HeaderDigest: []string{s.digest},
		}}
		_, err = js.PublishMsgAsync(msg, jetstream.WithStallWait(time.Minute))
		return err
	}
	// Big sessions get coldBigLen-50 entries spread evenly through the
	// first 90%; the rest go round robin to the small sessions.
	first := coldTotal * 9 / 10
	bigEvery := first / (coldBig * (coldBigLen - 50))
	small := coldBig
	for k := 0; k < first; k++ {
		i := small
		if k%bigEvery == 0 && st[(k/bigEvery)%coldBig].n < coldBigLen-50 {
			i = (k / bigEvery) % coldBig
		} else {
			small++
			if small == coldSessions {
				small = coldBig
			}
		}
		if err := publish(i); err != nil {
			return nil, err
		}
	}
	if err := waitAsync(ctx, js); err != nil {
		return nil, err
	}
	for _, s := range big {
		if _, err := l.Read(ctx, events.DefaultRef(s), 0); err != nil { // writes the snapshot
			return nil, err
		}
	}
	// The last 10% of the traffic: 50 more entries of each big session.
	// The first half of the big sessions then settle (their writer writes
	// a snapshot, as at the end of a run); the others keep a tail of 50
	// entries spread through the last 100k messages.
	rest := coldTotal - first
	bigEvery = rest / (coldBig * 50)
	for k := 0; k < rest; k++ {
		i := coldBig + k%(coldSessions-coldBig)
		if k%bigEvery == 0 && st[(k/bigEvery)%coldBig].n < coldBigLen {
			i = (k / bigEvery) % coldBig
		}
		if err := publish(i); err != nil {
			return nil, err
		}
	}
	if err := waitAsync(ctx, js); err != nil {
		return nil, err
	}
	for _, sid := range big[:coldBig/2] {
		s, err := session.Load(ctx, l, events.DefaultRef(sid))
		if err != nil {
			return nil, err
		}
		if err := s.Snapshot(ctx); err != nil {
			return nil, err
		}
	}
	return big, nil
}

func waitAsync(ctx context.Context, js jetstream.JetStream) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	select {
	case <-js.PublishAsyncComplete():
		return nil
	case <-ctx.Done():
		return fmt.Errorf("async publishes not acknowledged: %w", ctx.Err())
	}
}

// BenchmarkColdLoad1M loads 1,000-entry sessions from a stream of 1M
// entries of 10,000 sessions: through the log (snapshot plus the tail read
// by batched direct get), against a raw read of the same session by subject
// from the start (an ordered consumer, what a reader without the snapshot
// does). Half of the big sessions settled (snapshot current), half have a
// tail of 50 entries after their snapshot; both are reported. Building the stream takes a minute or more, so one call does
// coldLoads loads of each kind whatever b.N is; run it alone with
//
//	go test -run '^$' -bench ColdLoad1M -benchtime 1x -timeout 30m ./pkg/session/
func BenchmarkColdLoad1M(b *testing.B) {
	ctx := context.Background()
	s := natstest.RunServer(b)
	nc := natstest.Connect(b, s.Server)
	js, err := jetstream.New(nc, jetstream.WithPublishAsyncMaxPending(4096))
	if err != nil {
		b.Fatal(err)
	}
	l, err := session.NewJetStreamLog(ctx, js)
	if err != nil {
		b.Fatal(err)
	}
	t0 := time.Now()
	big, err := fillCold(ctx, js, l)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("filled %d entries in %v", coldTotal, time.Since(t0).Round(time.Millisecond))
	names := events.Names{}
	var settled, tail, rawTimes []time.Duration
	b.ResetTimer()
	for i := range coldLoads {
		k := i % len(big)
		sid := big[k]
		t0 := time.Now()
		s, err := session.Load(ctx, l, events.DefaultRef(sid))
		if err != nil {
			b.Fatal(err)
		}
		if d := time.Since(t0); k < coldBig/2 {
			settled = append(settled, d)
		} else {
			tail = append(tail, d)
		}
		if n := len(s.Records()); n != coldBigLen {
			b.Fatalf("loaded %d entries of %s, want %d", n, sid, coldBigLen)
		}
		t0 = time.Now()
		n, err := rawRead(ctx, js, names.SessionsStream(), names.SessionSubject(events.DefaultRef(sid)))
		if err != nil {
			b.Fatal(err)
		}
		rawTimes = append(rawTimes, time.Since(t0))
		if n != coldBigLen {
			b.Fatalf("raw read %d entries of %s, want %d", n, sid, coldBigLen)
		}
	}
	p := func(d []time.Duration, q float64) float64 {
		slices.Sort(d)
		return float64(d[int(q*float64(len(d)-1))].Microseconds()) / 1000
	}
	b.ReportMetric(p(settled, 0.5), "settled-p50-ms")
	b.ReportMetric(p(settled, 0.99), "settled-p99-ms")
	b.ReportMetric(p(tail, 0.5), "tail50-p50-ms")
	b.ReportMetric(p(tail, 0.99), "tail50-p99-ms")
	b.ReportMetric(p(rawTimes, 0.5), "raw-p50-ms")
	b.ReportMetric(p(rawTimes, 0.99), "raw-p99-ms")
	b.ReportMetric(p(rawTimes, 0.5)/p(settled, 0.5), "raw/settled-p50")
}

// rawRead reads every message of subj with an ordered consumer and counts them.
func rawRead(ctx context.Context, js jetstream.JetStream, stream, subj string) (int, error) {
	cons, err := js.OrderedConsumer(ctx, stream, jetstream.OrderedConsumerConfig{FilterSubjects: []string{subj}})
	if err != nil {
		return 0, err
	}
	info, err := cons.Info(ctx)
	if err != nil {
		return 0, err
	}
	want := int(info.NumPending)
	n := 0
	for n < want {
		batch, err := cons.FetchNoWait(want - n)
		if err != nil {
			return n, err
		}
		got := 0
		for range batch.Messages() {
			got++
		}
		if err := batch.Error(); err != nil {
			return n, err
		}
		n += got
		if got == 0 {
			batch, err := cons.Fetch(want-n, jetstream.FetchMaxWait(5*time.Second))
			if err != nil {
				return n, err
			}
			for range batch.Messages() {
				n++
			}
		}
	}
	return n, nil
}
