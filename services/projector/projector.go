package projector

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/cairn-agents/cairn/services/projector/internal/store"
	"github.com/nats-io/nats.go/jetstream"
)

// Projector keeps the read models up to date with the log and serves them.
type Projector struct {
	cfg  Config
	dirs dirs
	live *live // the database queries read; Run's goroutine may replace it
	prog progress
	m    *metrics
	rb   rebuilds // online rebuilds (online.go)
}

// New validates cfg and opens the database. Close releases it. A database
// an online rebuild left unfinished beside it (Dir.rebuild) is removed, and
// a switch-over a crash cut short is finished first.
func New(cfg Config) (*Projector, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	p := &Projector{cfg: cfg, dirs: newDirs(cfg.FS, cfg.Dir)}
	p.rb.switches = make(chan *switchReq)
	if err := p.dirs.recover(cfg.Logger); err != nil {
		return nil, err
	}
	db, err := store.Open(cfg.Dir, p.storeOptions())
	if err == nil {
		err = p.dirs.syncParent() // a database Open just created survives a crash
		if err != nil {
			err = errors.Join(err, db.Close())
		}
	}
	if err != nil {
		return nil, err
	}
	p.live = newLive(db)
	applied, err := db.Applied()
	if err != nil {
		return nil, errors.Join(err, db.Close())
	}
	p.prog.applied.Store(applied)
	if p.m, err = newMetrics(cfg.Registry, &p.prog); err != nil {
		return nil, errors.Join(fmt.Errorf("projector: register metrics: %w", err), db.Close())
	}
	return p, nil
}

// Close closes the database. Call it after Run has returned.
func (p *Projector) Close() error { return p.live.current().Close() }

// Applied returns the stream sequence of the last applied entry.
func (p *Projector) Applied() uint64 { return p.prog.applied.Load() }

// Lag returns how many entries the projector knows the stream holds beyond
// what it applied.
func (p *Projector) Lag() uint64 { return p.prog.lag() }

// Run consumes the log and applies it until ctx ends; it then returns nil
// once the last batch is committed and the consumer stopped. Until the
// sessions stream exists and the consumer is set up it retries every second
// (NATS may be starting, electing a leader or overloaded), logging why.
//
// While Run runs, StartRebuild may start an online rebuild; Run stops it
// (removing its partial database) and waits for it before returning.
func (p *Projector) Run(ctx context.Context) (err error) {
	w, err := p.live.current().NewWriter()
	if err != nil {
		return err
	}
	defer func() { // the writer of the last switch-over, if any
		if w != nil {
			err = errors.Join(err, w.Close()) // syncs the last batch
		}
	}()
	stopRebuilds := p.startRebuilds(ctx)
	defer stopRebuilds()
	for {
		var err error
		w, err = p.consume(ctx, w)
		if w == nil {
			return err // a failed switch-over left no database open
		}
		if !errors.Is(err, errGap) {
			return err
		}
		// setup recreates the consumer at applied+1, since its delivered
		// position is now past the database's.
		p.cfg.Logger.Warn("projector: delivery out of order; reading again from the last applied entry", "err", err, "applied", w.Applied())
	}
}

// consume runs one consumer until ctx ends or an error (errGap: start
// again). It returns the writer to go on with, which a switch-over may have
// replaced.
func (p *Projector) consume(ctx context.Context, w *store.Writer) (*store.Writer, error) {
	stream, cons := p.setup(ctx, w.Applied())
	if cons == nil {
		return w, nil // ctx ended
	}
	p.refresh(ctx, stream)

	feedCtx, stopFeed := context.WithCancel(ctx)
	msgs := make(chan *delivery, 2*p.cfg.BatchSize)
	dec := startDecoders(2 * p.cfg.BatchSize)
	defer func() { stopFeed(); dec.stop() }() // after the consumer has stopped
	cc, err := cons.Consume(dec.handler(feedCtx, msgs),
		jetstream.PullMaxMessages(2*p.cfg.BatchSize),
		jetstream.ConsumeErrHandler(func(_ jetstream.ConsumeContext, err error) {
			p.cfg.Logger.Warn("projector: consume", "err", err)
		}))
	if err != nil {
		stopFeed()
		return w, fmt.Errorf("projector: consume: %w", err)
	}
	p.prog.running.Store(true)
	pu := &pump{
		w: w, batch: p.cfg.BatchSize, prog: &p.prog, m: p.m, ack: true,
		tick: func(ctx context.Context) { p.refresh(ctx, stream) }, tickEvery: time.Second,
		onCommit: p.cfg.OnCommit, switches: p.rb.switches, serve: p.switchOver,
	}
	err = pu.run(ctx, msgs)
	p.prog.running.Store(false)
	stopFeed()
	cc.Stop()
	<-cc.Closed()
	return pu.w, err
}

// setup finds the sessions stream and the consumer, retrying every second
// until it succeeds or ctx ends (then it returns nils).
func (p *Projector) setup(ctx context.Context, applied uint64) (jetstream.Stream, jetstream.Consumer) {
	name := p.cfg.names().SessionsStream()
	var last string
	for {
		s, err := p.cfg.JetStream.Stream(ctx, name)
		if err == nil {
			var c jetstream.Consumer
			if c, err = p.consumer(ctx, s, applied); err == nil {
				return s, c
			}
		} else {
			err = fmt.Errorf("projector: stream %s: %w", name, err)
		}
		if ctx.Err() != nil {
			return nil, nil
		}
		if msg := err.Error(); msg != last { // log each new reason once
			p.cfg.Logger.Warn("projector: waiting to start; retrying every second", "err", err)
			last = msg
		}
		t := time.NewTimer(time.Second)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, nil
		case <-t.C:
		}
	}
}

// consumer returns the durable consumer positioned right after applied. A
// consumer whose acknowledged or delivered position differs from the
// database's (the database lost unsynced batches, was rebuilt or replaced,
// or messages were delivered and not acknowledged) is recreated: its position
// must come from the database, never the other way round.
func (p *Projector) consumer(ctx context.Context, s jetstream.Stream, applied uint64) (jetstream.Consumer, error) {
	name := p.cfg.Durable
	c, err := s.Consumer(ctx, name)
	switch {
	case err == nil:
		ci := c.CachedInfo()
		if ci.AckFloor.Stream == applied && ci.Delivered.Stream == applied && ci.Config.FilterSubject == p.cfg.names().AllSessions() {
			return c, nil
		}
		p.cfg.Logger.Info("projector: recreating consumer at the database's position",
			"consumer", name, "applied", applied, "ackFloor", ci.AckFloor.Stream, "delivered", ci.Delivered.Stream)
		if err := s.DeleteConsumer(ctx, name); err != nil && !errors.Is(err, jetstream.ErrConsumerNotFound) {
			return nil, fmt.Errorf("projector: delete consumer %s: %w", name, err)
		}
	case errors.Is(err, jetstream.ErrConsumerNotFound):
	default:
		return nil, fmt.Errorf("projector: consumer %s: %w", name, err)
	}
	cfg := jetstream.ConsumerConfig{
		Durable:       name,
		Description:   "Cairn projector: read models in Pebble",
		FilterSubject: p.cfg.names().AllSessions(),
		AckPolicy:     jetstream.AckAllPolicy,
		MaxAckPending: 4 * p.cfg.BatchSize,
		DeliverPolicy: jetstream.DeliverAllPolicy,
	}
	if applied > 0 {
		cfg.DeliverPolicy = jetstream.DeliverByStartSequencePolicy
		cfg.OptStartSeq = applied + 1
	}
	c, err = s.CreateConsumer(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("projector: create consumer %s: %w", name, err)
	}
	return c, nil
}

// refresh learns the stream's last sequence, so that lag shows entries not
// yet delivered.
func (p *Projector) refresh(ctx context.Context, s jetstream.Stream) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	info, err := s.Info(ctx)
	if err != nil {
		if ctx.Err() == nil {
			p.cfg.Logger.Warn("projector: stream info", "err", err)
		}
		return
	}
	p.prog.seen(info.State.LastSeq)
}

// pebbleLogger sends Pebble's messages to the projector's logger.
type pebbleLogger struct{ l *slog.Logger }

func (l pebbleLogger) Infof(string, ...any) {}
func (l pebbleLogger) Errorf(format string, args ...any) {
	l.l.Error("pebble: " + fmt.Sprintf(format, args...))
}
func (l pebbleLogger) Fatalf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	l.l.Error("pebble: fatal: " + msg)
	panic(msg) // Pebble requires Fatalf not to return
}
