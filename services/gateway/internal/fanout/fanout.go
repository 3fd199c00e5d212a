// Package fanout delivers the messages of one JetStream stream to many
// in-memory subscribers keyed by subject, over a single ordered consumer. A
// gateway serving thousands of live streams therefore holds one consumer per
// stream, never one per client (the server caps consumers per stream).
//
// # Ordering
//
// A subscriber sees the messages of its subject in stream order, each with
// its stream sequence, from the moment it subscribed: every message of its
// subject whose sequence is above [Sub.From] and none at or below it.
//
// # Back-pressure
//
// Each subscriber has a bounded buffer. A subscriber that falls behind is
// closed with [ErrSlow] rather than slowing every other one down; live clients
// then resume from the last sequence they saw.
//
// # Concurrency
//
// All methods are safe for concurrent use. Run owns the consumer; it returns
// when ctx is cancelled, after closing every subscription.
package fanout

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cairn-agents/cairn/pkg/follow"
)

// ErrSlow closes a subscription whose buffer filled up.
var ErrSlow = errors.New("subscriber too slow: buffer full")

// ErrClosed closes subscriptions when the fanout stops.
var ErrClosed = errors.New("fanout stopped")

// Msg is one stream message.
type Msg struct {
	Seq     uint64
	Subject string
	Data    []byte
}

// Sub is one subscription. Read C until it is closed, then Err says why.
type Sub struct {
	C <-chan Msg
	// From is the last stream sequence dispatched before the subscription:
	// the subscriber receives the messages of its subject after it. A client
	// that resumes from From after losing C misses nothing.
	From    uint64
	c       chan Msg
	subject string
	f       *Fanout
	err     error // set before c is closed
}

// Err returns why C was closed: ErrSlow, ErrClosed, or nil after Close.
func (s *Sub) Err() error {
	s.f.mu.Lock()
	defer s.f.mu.Unlock()
	return s.err
}

// Close ends the subscription.
func (s *Sub) Close() { s.f.remove(s, nil) }

// Fanout reads one stream and dispatches its messages by subject.
type Fanout struct {
	js     jetstream.JetStream
	stream string
	filter string
	buffer int
	log    *slog.Logger

	ready chan struct{}
	mu    struct {
		sync.Mutex
		subs    map[string]map[*Sub]struct{}
		stopped bool
		pos     uint64 // last sequence dispatched (or a lower bound before the first)
	}
}

// New returns a fanout over stream, for messages matching filter (a
// wildcard such as cairn.events.*), with buffer messages per subscriber.
func New(js jetstream.JetStream, stream, filter string, buffer int, log *slog.Logger) *Fanout {
	if buffer <= 0 {
		buffer = 256
	}
	f := &Fanout{js: js, stream: stream, filter: filter, buffer: buffer, log: log, ready: make(chan struct{})}
	f.mu.subs = make(map[string]map[*Sub]struct{})
	return f
}

// Ready is closed once the consumer is delivering: messages stored after
// that point reach subscribers registered before them.
func (f *Fanout) Ready() <-chan struct{} { return f.ready }

// Subscribe registers a subscriber for subject.
func (f *Fanout) Subscribe(subject string) *Sub {
	c := make(chan Msg, f.buffer)
	s := &Sub{C: c, c: c, subject: subject, f: f}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.mu.stopped {
		s.err = ErrClosed
		close(c)
		return s
	}
	s.From = f.mu.pos
	m := f.mu.subs[subject]
	if m == nil {
		m = make(map[*Sub]struct{})
		f.mu.subs[subject] = m
	}
	m[s] = struct{}{}
	return s
}

func (f *Fanout) remove(s *Sub, why error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.removeLocked(s, why)
}

func (f *Fanout) removeLocked(s *Sub, why error) {
	m := f.mu.subs[s.subject]
	if _, ok := m[s]; !ok {
		return
	}
	delete(m, s)
	if len(m) == 0 {
		delete(f.mu.subs, s.subject)
	}
	s.err = why
	close(s.c)
}

// Run consumes new messages of the stream until ctx is cancelled.
func (f *Fanout) Run(ctx context.Context) error {
	defer f.stop()
	// Before the first message, the stream's last sequence now is a lower
	// bound of where the consumer starts (it delivers only newer messages).
	var from uint64 // 0: what is stored after follow.Start
	if st, err := f.js.Stream(ctx, f.stream); err == nil {
		if info, err := st.Info(ctx); err == nil {
			f.mu.Lock()
			f.mu.pos = max(f.mu.pos, info.State.LastSeq)
			f.mu.Unlock()
			from = info.State.LastSeq + 1 // nothing between this and the first delivery is skipped
		}
	}
	// pkg/follow, not nats.go's ordered consumer: that one, recreated right
	// after a NATS node is killed, can land on the dead node and never
	// deliver again while it stays down.
	fl, err := follow.Start(ctx, f.js, follow.Config{Stream: f.stream, Filter: f.filter, From: from, Logger: f.log}, func(m jetstream.Msg) {
		meta, err := m.Metadata()
		if err != nil {
			f.log.Warn("fanout: message without metadata", "stream", f.stream, "err", err)
			return
		}
		f.dispatch(Msg{Seq: meta.Sequence.Stream, Subject: m.Subject(), Data: m.Data()})
	})
	if err != nil {
		return fmt.Errorf("fanout: consumer on %s: %w", f.stream, err)
	}
	close(f.ready)
	<-ctx.Done()
	fl.Stop()
	return nil
}

func (f *Fanout) dispatch(m Msg) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.mu.pos = max(f.mu.pos, m.Seq)
	for s := range f.mu.subs[m.Subject] {
		select {
		case s.c <- m:
		default:
			f.removeLocked(s, ErrSlow)
		}
	}
}

func (f *Fanout) stop() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.mu.stopped = true
	for _, m := range f.mu.subs {
		for s := range m {
			f.removeLocked(s, ErrClosed)
		}
	}
}
