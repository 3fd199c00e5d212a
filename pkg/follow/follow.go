package follow

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cairn-agents/cairn/pkg/events"
)

// Config is what a Follower reads.
type Config struct {
	// Stream is the stream's name. Required.
	Stream string
	// Filter is a subject filter; "" reads every subject of the stream.
	Filter string
	// From is the first stream sequence to deliver; 0 means the messages
	// stored after Start (the stream's last sequence then, plus one), or,
	// with Since set, those stored since then.
	From uint64
	// Since, with From 0, starts at the first message stored at or after it.
	Since time.Time
	// Heartbeat is the idle heartbeat asked of the server (500ms to 30s); a
	// consumer that misses two in a row is replaced. Default 2s.
	Heartbeat time.Duration
	// OpenTimeout bounds the creation of one consumer, and Start's look-up
	// of the stream. Default 5s.
	OpenTimeout time.Duration
	// Logger receives a line per replaced consumer. Default: discard.
	Logger *slog.Logger
}

// Follower reads one stream in order; see the package documentation.
type Follower struct {
	cfg    Config
	js     jetstream.JetStream
	fn     func(jetstream.Msg)
	prefix string
	cancel context.CancelFunc
	wg     sync.WaitGroup
	wake   chan string // why the current consumer must be replaced

	mu struct {
		sync.Mutex
		next     uint64 // next stream sequence to deliver
		gen      int    // the current consumer; deliveries of others are dropped
		dseq     uint64 // last delivery sequence of the current consumer
		restarts int
		consumer string
		stopped  bool
	}
}

const (
	defaultHeartbeat   = 2 * time.Second
	defaultOpenTimeout = 5 * time.Second
	// inactive is how long the server keeps a consumer nobody pulls from.
	inactive   = time.Minute
	maxBackoff = 2 * time.Second
)

// Start checks the stream, fixes the starting sequence and follows the
// stream until ctx is done or Stop is called. The first consumer is opened
// in the background: a message stored after Start returns is delivered even
// if that takes a while.
func Start(ctx context.Context, js jetstream.JetStream, cfg Config, fn func(jetstream.Msg)) (*Follower, error) {
	if cfg.Stream == "" {
		return nil, errors.New("follow: Stream is required")
	}
	if fn == nil {
		return nil, errors.New("follow: fn is required")
	}
	if cfg.Heartbeat == 0 {
		cfg.Heartbeat = defaultHeartbeat
	}
	if cfg.Heartbeat < 500*time.Millisecond || cfg.Heartbeat > 30*time.Second {
		return nil, fmt.Errorf("follow: Heartbeat %v: want 500ms to 30s (the server's range)", cfg.Heartbeat)
	}
	if cfg.OpenTimeout < 0 {
		return nil, fmt.Errorf("follow: OpenTimeout %v must not be negative", cfg.OpenTimeout)
	}
	if cfg.OpenTimeout == 0 {
		cfg.OpenTimeout = defaultOpenTimeout
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	// Bounded like a consumer's creation: with a far deadline on ctx,
	// nats.go does not apply its default timeout, and a request the server
	// drops (its stream leader lost, a leader election) is never answered.
	sctx, cancel := context.WithTimeout(ctx, cfg.OpenTimeout)
	st, err := js.Stream(sctx, cfg.Stream)
	cancel()
	if err != nil {
		return nil, fmt.Errorf("follow: stream %s: %w", cfg.Stream, err)
	}
	from := cfg.From
	if from == 0 && cfg.Since.IsZero() {
		from = st.CachedInfo().State.LastSeq + 1
	}
	f := &Follower{cfg: cfg, js: js, fn: fn, prefix: "follow_" + events.NewID(), wake: make(chan string, 1)}
	f.mu.next = from
	ctx, f.cancel = context.WithCancel(ctx)
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		f.run(ctx)
	}()
	return f, nil
}

// Stop stops following and waits until fn is no longer running.
func (f *Follower) Stop() {
	f.cancel()
	f.wg.Wait()
	f.mu.Lock()
	f.mu.stopped = true
	f.mu.gen++
	f.mu.Unlock()
}

// Next is the stream sequence after the last one delivered (or the first to
// deliver).
func (f *Follower) Next() uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.mu.next
}

// Restarts is how many times a consumer was replaced.
func (f *Follower) Restarts() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.mu.restarts
}

// Consumer is the name of the current consumer ("" while none is open).
func (f *Follower) Consumer() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.mu.consumer
}

// run opens a consumer, reads until it must be replaced, and again, until
// ctx is done.
func (f *Follower) run(ctx context.Context) {
	nc := f.js.Conn()
	status := nc.StatusChanged(nats.CONNECTED)
	defer nc.RemoveStatusListener(status)
	serial := 0
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		serial++
		name := f.prefix + "_" + strconv.Itoa(serial)
		// A reconnect before the new consumer's first pull loses nothing.
		for drained := false; !drained; {
			select {
			case <-status:
			default:
				drained = true
			}
		}
		cc, err := f.open(ctx, name)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			f.cfg.Logger.Warn("follow: open consumer", "stream", f.cfg.Stream, "filter", f.cfg.Filter, "consumer", name, "err", err, "retry_in", backoff)
			f.remove(name) // it may exist, on a peer that did not answer
			select {
			case <-ctx.Done():
				return
			case <-time.After(backoff): // retry pacing
			}
			backoff = min(2*backoff, maxBackoff)
			continue
		}
		backoff = 100 * time.Millisecond
		var why string
		select {
		case <-ctx.Done():
		case why = <-f.wake:
		case <-status:
			why = "reconnected: deliveries may have been lost"
		}
		cc.Stop()
		<-cc.Closed()
		f.mu.Lock()
		f.mu.gen++ // drop any delivery still in flight from this consumer
		f.mu.consumer = ""
		if why != "" {
			f.mu.restarts++
		}
		next := f.mu.next
		f.mu.Unlock()
		f.remove(name)
		if why != "" {
			f.cfg.Logger.Warn("follow: replacing consumer", "stream", f.cfg.Stream, "filter", f.cfg.Filter, "consumer", name, "why", why, "next", next)
		}
	}
}

// open creates consumer name at the next sequence and starts consuming.
func (f *Follower) open(ctx context.Context, name string) (jetstream.ConsumeContext, error) {
	f.mu.Lock()
	next := f.mu.next
	f.mu.Unlock()
	cfg := jetstream.ConsumerConfig{
		Name:              name,
		DeliverPolicy:     jetstream.DeliverByStartSequencePolicy,
		OptStartSeq:       next,
		AckPolicy:         jetstream.AckNonePolicy,
		FilterSubject:     f.cfg.Filter,
		Replicas:          1,
		MemoryStorage:     true,
		InactiveThreshold: inactive,
	}
	if next == 0 { // nothing delivered yet, from a time on
		since := f.cfg.Since
		cfg.DeliverPolicy, cfg.OptStartSeq, cfg.OptStartTime = jetstream.DeliverByStartTimePolicy, 0, &since
	}
	octx, cancel := context.WithTimeout(ctx, f.cfg.OpenTimeout)
	cons, err := f.js.CreateConsumer(octx, f.cfg.Stream, cfg)
	cancel()
	if err != nil {
		return nil, err
	}
	// Drain a stale signal of the consumer before.
	select {
	case <-f.wake:
	default:
	}
	f.mu.Lock()
	f.mu.gen++
	gen := f.mu.gen
	f.mu.dseq = 0
	f.mu.consumer = name
	f.mu.Unlock()
	cc, err := cons.Consume(func(m jetstream.Msg) { f.deliver(gen, m) },
		jetstream.PullHeartbeat(f.cfg.Heartbeat),
		jetstream.PullExpiry(max(5*f.cfg.Heartbeat, 5*time.Second)),
		jetstream.ConsumeErrHandler(func(_ jetstream.ConsumeContext, err error) {
			f.mu.Lock()
			defer f.mu.Unlock()
			if gen == f.mu.gen {
				f.signalLocked("consume: " + err.Error())
			}
		}))
	if err != nil {
		f.remove(name)
		return nil, err
	}
	return cc, nil
}

// deliver hands m to fn if it comes from the current consumer and follows
// the last delivery.
func (f *Follower) deliver(gen int, m jetstream.Msg) {
	meta, err := m.Metadata()
	f.mu.Lock()
	defer f.mu.Unlock()
	if gen != f.mu.gen || f.mu.stopped {
		return
	}
	if err != nil {
		f.signalLocked("a message without metadata: " + err.Error())
		return
	}
	if meta.Sequence.Consumer != f.mu.dseq+1 {
		f.signalLocked(fmt.Sprintf("delivery %d after %d: some were lost", meta.Sequence.Consumer, f.mu.dseq))
		return
	}
	f.mu.dseq = meta.Sequence.Consumer
	if meta.Sequence.Stream < f.mu.next {
		return // delivered before
	}
	f.mu.next = meta.Sequence.Stream + 1
	f.fn(m)
}

// signalLocked asks run to replace the consumer, once per consumer.
func (f *Follower) signalLocked(why string) {
	f.mu.gen++ // deliver nothing more from this consumer
	select {
	case f.wake <- why:
	default:
	}
}

// remove deletes consumer name in the background; a consumer on a dead
// node cannot be deleted now and goes when the node returns.
func (f *Follower) remove(name string) {
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = f.js.DeleteConsumer(ctx, f.cfg.Stream, name)
	}()
}
