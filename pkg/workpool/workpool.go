// Package workpool runs the handlers of a JetStream pull consumer's messages
// in a fixed number of slots: the work loop the tool workers (pkg/toolbus)
// and the compactors (services/compactor) share.
//
// One fetcher per pool asks for as many messages as there are free slots
// (one pull request outstanding per pool, whatever Slots is, so many
// workers stay under the consumer's MaxWaiting) and starts the handler on
// each as it arrives: a message is never held waiting for a slot. While the
// handler runs, the pool sends in-progress acknowledgements every third of
// AckWait, so a long handler keeps its message. The handler settles the
// message (Ack, Nak, Term, ...); the pool never acknowledges for it.
//
// # Concurrency
//
// At most Slots handlers run at once, each on its own goroutine. Handle must
// be safe for concurrent use. [Pool.Running] may be called from any
// goroutine.
//
// # Shutdown
//
// When the context given to [Start] is done the pool stops fetching at once
// (a message that still arrives on the last pull is handed back unstarted,
// with a Nak delayed by PullWait, so that it goes to another worker instead
// of back to that same pull) and lets running handlers finish for up to
// ShutdownTimeout. Then it cancels the
// context of those still running with cause [ErrShutdown], waits for them
// to return, and hands back (Nak) every message their handler left
// unsettled, so another worker takes it. The handlers' context is not
// cancelled by the Start context itself: it carries its values but ends only
// at the deadline. [Pool.Wait] returns when every handler has returned.
package workpool

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// ErrShutdown is the cause with which a pool cancels the handlers still
// running at its shutdown deadline; their unsettled messages are handed back.
var ErrShutdown = errors.New("workpool: shutting down")

// DefaultPullWait is how long one fetch waits for a message when
// Config.PullWait is zero; it bounds how long a pool takes to stop fetching.
const DefaultPullWait = time.Second

// Config configures a pool.
type Config struct {
	Consumer jetstream.Consumer // required: the pull consumer to take messages from
	// Handle handles one message and settles it. Its context ends only at
	// the shutdown deadline (cause ErrShutdown), not when Start's does.
	Handle func(ctx context.Context, m jetstream.Msg)
	// Slots bounds the handlers run at once; at least 1.
	Slots int
	// AckWait is the consumer's AckWait: in-progress acknowledgements are
	// sent every AckWait/3 while a handler runs; at least 3ms.
	AckWait time.Duration
	// ShutdownTimeout is how long running handlers may finish after Start's
	// context is done; not negative.
	ShutdownTimeout time.Duration
	// PullWait bounds one fetch; default DefaultPullWait.
	PullWait time.Duration
	// Logger receives fetch failures; required (a library does not log to
	// the process's default logger behind its caller's back).
	Logger *slog.Logger
}

// Pool is a running work pool.
type Pool struct {
	cfg     Config
	stop    chan struct{}           // closed: stop fetching
	cancel  context.CancelCauseFunc // cancels every handler's context
	ctx     context.Context         // parent of every handler's context
	free    chan struct{}           // one token per free slot
	work    sync.WaitGroup          // the fetcher and every running handler
	done    chan struct{}
	running atomic.Int64
}

// Start checks cfg and starts fetching for cfg.Slots slots; see the package doc
// for what happens when ctx is done.
func Start(ctx context.Context, cfg Config) (*Pool, error) {
	switch {
	case cfg.Consumer == nil:
		return nil, errors.New("workpool: Consumer is required")
	case cfg.Handle == nil:
		return nil, errors.New("workpool: Handle is required")
	case cfg.Slots < 1:
		return nil, fmt.Errorf("workpool: Slots must be at least 1, got %d", cfg.Slots)
	case cfg.AckWait < 3*time.Millisecond:
		return nil, fmt.Errorf("workpool: AckWait must be at least 3ms, got %s", cfg.AckWait)
	case cfg.ShutdownTimeout < 0:
		return nil, fmt.Errorf("workpool: ShutdownTimeout must not be negative, got %s", cfg.ShutdownTimeout)
	case cfg.Logger == nil:
		return nil, errors.New("workpool: Logger is required")
	}
	if cfg.PullWait <= 0 {
		cfg.PullWait = DefaultPullWait
	}
	p := &Pool{cfg: cfg, stop: make(chan struct{}), done: make(chan struct{}), free: make(chan struct{}, cfg.Slots)}
	for range cfg.Slots {
		p.free <- struct{}{}
	}
	p.ctx, p.cancel = context.WithCancelCause(context.WithoutCancel(ctx))
	p.work.Add(1)
	go p.fetch()
	go p.shutdownOn(ctx)
	return p, nil
}

// Wait blocks until the pool has shut down: every handler has returned.
func (p *Pool) Wait() { <-p.done }

// Done is closed when the pool has shut down.
func (p *Pool) Done() <-chan struct{} { return p.done }

// Running returns the number of handlers running now.
func (p *Pool) Running() int { return int(p.running.Load()) }

func (p *Pool) shutdownOn(ctx context.Context) {
	defer close(p.done)
	<-ctx.Done()
	close(p.stop)
	workDone := make(chan struct{})
	go func() { p.work.Wait(); close(workDone) }()
	timer := time.NewTimer(p.cfg.ShutdownTimeout)
	defer timer.Stop()
	select {
	case <-workDone:
	case <-timer.C:
		p.cfg.Logger.Warn("shutdown deadline passed; handing back running work", "running", p.running.Load())
		p.cancel(ErrShutdown)
		<-workDone
	}
	p.cancel(nil)
}

// fetch takes messages for the free slots until the pool stops.
func (p *Pool) fetch() {
	defer p.work.Done()
	for {
		select { // a select picks at random among ready cases: stop comes first
		case <-p.stop:
			return
		default:
		}
		select { // wait for a free slot, then take every free one
		case <-p.stop:
			return
		case <-p.free:
		}
		n := 1
		for more := true; more; {
			select {
			case <-p.free:
				n++
			default:
				more = false
			}
		}
		batch, err := p.cfg.Consumer.Fetch(n, jetstream.FetchMaxWait(p.cfg.PullWait))
		if err == nil {
			for m := range batch.Messages() {
				select {
				case <-p.stop:
					// Not started: hand it back, delayed past the end of this
					// pull so that it goes to another worker, not back to us.
					_ = m.NakWithDelay(p.cfg.PullWait)
					continue
				default:
				}
				n--
				p.work.Go(func() {
					defer func() { p.free <- struct{}{} }()
					p.run(m)
				})
			}
			err = batch.Error()
		}
		for range n { // slots the batch did not fill
			p.free <- struct{}{}
		}
		if err != nil && !errors.Is(err, nats.ErrTimeout) && !errors.Is(err, jetstream.ErrNoMessages) {
			p.cfg.Logger.Warn("fetch failed", "err", err)
			t := time.NewTimer(p.cfg.PullWait)
			select {
			case <-p.stop:
				t.Stop()
				return
			case <-t.C:
			}
		}
	}
}

// run handles m with in-progress acknowledgements, and hands it back if the
// shutdown deadline cut its handler off before it settled m.
func (p *Pool) run(m jetstream.Msg) {
	p.running.Add(1)
	defer p.running.Add(-1)
	var beats sync.WaitGroup
	stopBeats := make(chan struct{})
	beats.Go(func() {
		tick := time.NewTicker(p.cfg.AckWait / 3)
		defer tick.Stop()
		for {
			select {
			case <-stopBeats:
				return
			case <-tick.C:
				err := m.InProgress()
				if errors.Is(err, jetstream.ErrMsgAlreadyAckd) {
					return // settled by the handler
				}
				if err != nil {
					p.cfg.Logger.Warn("in-progress ack failed", "subject", m.Subject(), "err", err)
				}
			}
		}
	})
	p.cfg.Handle(p.ctx, m)
	close(stopBeats)
	beats.Wait()
	if errors.Is(context.Cause(p.ctx), ErrShutdown) {
		// The jetstream.Msg knows whether it was settled: Nak refuses one
		// the handler acknowledged, terminated or handed back already.
		_ = m.Nak()
	}
}
