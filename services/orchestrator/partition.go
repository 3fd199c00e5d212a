package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cairn-agents/cairn/pkg/compactbus"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cairn-agents/cairn/services/orchestrator/internal/intake"
)

// partition is one held partition: its command intake and its sessions'
// actors. It stops when its lease is lost or the orchestrator stops.
type partition struct {
	o      *Orchestrator
	n      int
	in     *intake.Intake
	ctx    context.Context
	cancel context.CancelFunc
	done_  chan struct{}
	wg     sync.WaitGroup // actors and their runs
	// compactbus is the compaction client of the partition's sessions,
	// made once (it holds a JetStream context; one per session would cost
	// every resident session its size).
	compactbus func() (*compactbus.Client, error)
	events     *eventQueue // the live events of its sessions
	// replayUntil is the commands stream's last sequence when the
	// partition was acquired: a command at or below it may have been taken
	// by an earlier owner (outcomes.go). Set before the intake starts.
	replayUntil atomic.Uint64
	// fenced is cancelled when the partition is given up (stopPartition):
	// from then on its sessions' appends are refused, and one under way is
	// cancelled, even one made with context.WithoutCancel (writable).
	fenced context.Context
	fence  context.CancelFunc
}

// errFenced refuses an append to a session of a partition this instance
// has given up.
var errFenced = errors.New("orchestrator: the partition's lease is fenced or lost; not writing to its sessions")

// writable is nil while this instance may append to the partition's
// sessions: the partition has not been given up and its lease is within
// its deadline by the clock (lease.Manager.Holds), which an actor waking
// from a freeze sees before the lease loop wakes to give the lease up.
func (p *partition) writable() error {
	if p.fenced.Err() != nil {
		return fmt.Errorf("%w (partition %d given up)", errFenced, p.n)
	}
	if l := p.o.leases; l != nil && !l.Holds(p.n) {
		return fmt.Errorf("%w (partition %d: lease past its deadline)", errFenced, p.n)
	}
	return nil
}

// awaitWritable returns nil once the partition is writable. Past the
// lease's deadline it waits, writing nothing, until the lease loop either
// renews the lease (a late renewal that succeeds proves nobody else held
// it) or gives it up: then, or if ctx ends first, it returns the error.
func (p *partition) awaitWritable(ctx context.Context) error {
	l := p.o.leases
	for {
		var changed <-chan struct{}
		if l != nil {
			changed = l.Changed() // before Holds: no change is missed
		}
		err := p.writable()
		if err == nil || p.fenced.Err() != nil {
			return err
		}
		select {
		case <-changed:
		case <-p.fenced.Done():
		case <-ctx.Done():
			// The caller stopped waiting (its run was aborted): not a
			// refusal, the partition may still be ours.
			return fmt.Errorf("orchestrator: waiting for partition %d's lease: %w", p.n, ctx.Err())
		}
	}
}

func (o *Orchestrator) startPartition(n int) {
	ctx, cancel := context.WithCancel(o.ctx)
	fenced, fence := context.WithCancel(context.Background())
	p := &partition{o: o, n: n, ctx: ctx, cancel: cancel, fenced: fenced, fence: fence, done_: make(chan struct{}),
		compactbus: sync.OnceValues(func() (*compactbus.Client, error) { return compactbus.New(o.cfg.Conn, o.cfg.Names) })}
	in, err := intake.New(intake.Config{
		JetStream: o.js, Stream: o.cfg.Names.CommandsStream(), Filter: o.cfg.Names.PartitionCommands(n),
		Checkpoints: o.checkpoints, Key: "cmd." + strconv.Itoa(n), Deliver: p.route, Logger: o.log,
	})
	if err != nil {
		o.log.Error("partition intake", "partition", n, "err", err)
		fence()
		cancel()
		close(p.done_)
		return
	}
	p.in = in
	p.events = newEventQueue(o)
	o.mu.Lock()
	o.mu.partitions[n] = p
	prev := o.mu.stopping[n]
	o.mu.Unlock()
	o.metrics.partitions.Inc()
	// The partition held before (released, then acquired again while it
	// was still stopping) must be gone first: its actors are still
	// registered, and a command routed to one of them would be dropped.
	waitPrev := func() bool {
		if prev == nil {
			return true
		}
		select {
		case <-prev.done_:
			return true
		case <-ctx.Done():
			return false
		}
	}
	o.wg.Add(1)
	go func() {
		defer o.wg.Done()
		defer close(p.done_)
		if waitPrev() {
			p.replayUntil.Store(o.lastCommandSeq(ctx))
		}
		// The intake must run as long as the partition is held: a failure
		// (a timeout creating its consumer under load, a NATS node gone) is
		// retried, or the partition's sessions would hear no more commands.
		for wait := 100 * time.Millisecond; waitPrev(); wait = min(2*wait, 5*time.Second) {
			err := in.Run(ctx)
			if ctx.Err() != nil {
				break
			}
			o.log.Warn("partition intake stopped; starting it again", "partition", n, "err", err, "in", wait)
			select {
			case <-ctx.Done():
			case <-time.After(wait):
			}
		}
		p.wg.Wait()
		p.events.close() // after the last actor's last event
	}()
	o.wg.Add(1)
	go func() {
		defer o.wg.Done()
		if waitPrev() {
			p.wakeInterrupted(ctx)
		}
	}()
	o.log.Debug("partition acquired", "partition", n) // the lease manager sums a round up at info
}

// wakeInterrupted starts an actor for every session marked running.
func (p *partition) wakeInterrupted(ctx context.Context) {
	lister, err := p.o.checkpoints.ListKeysFiltered(ctx, "run."+strconv.Itoa(p.n)+".*.*")
	if err != nil {
		if !errors.Is(err, jetstream.ErrNoKeysFound) && ctx.Err() == nil {
			p.o.log.Warn("cannot list running sessions", "partition", p.n, "err", err)
		}
		return
	}
	for k := range lister.Keys() {
		// run.<p>.<tenant>.<sid>; a mark of the layout before tenants
		// (run.<p>.<sid>) is not listed: its run is the default tenant's,
		// and its next command wakes it.
		if sid, ok := events.SessionOf(k); ok {
			p.actorFor(sid)
		}
	}
}

// stopPartition stops partition n without waiting for it: the lease
// manager calls it, and must go on renewing the other leases meanwhile. A
// run in flight can take a while to stop (an append retries for up to 30 s
// while NATS elects a leader); had the manager waited, every other lease of
// this instance would lapse, and another instance would run those
// partitions while this one still does. Run waits for every partition.
func (o *Orchestrator) stopPartition(n int) {
	o.mu.Lock()
	p := o.mu.partitions[n]
	delete(o.mu.partitions, n)
	if p != nil {
		o.mu.stopping[n] = p
	}
	o.mu.Unlock()
	if p == nil {
		return
	}
	p.fence() // before anything else: no append of its sessions from here on
	p.cancel()
	o.metrics.partitions.Dec()
	o.wg.Add(1)
	go func() {
		defer o.wg.Done()
		<-p.done_
		o.mu.Lock()
		if o.mu.stopping[n] == p {
			delete(o.mu.stopping, n)
		}
		o.mu.Unlock()
		o.log.Info("partition released", "partition", n)
	}()
}

// route hands a command to its session's actor, starting one if needed.
func (p *partition) route(c intake.Command) {
	for {
		a := p.actorFor(c.Session)
		if a == nil {
			return // stopping
		}
		if a.enqueue(item{cmd: &c}) {
			return
		}
		// The actor was leaving; the next lookup starts a fresh one.
		p.remove(a)
	}
}

func (p *partition) actorFor(sid events.SessionRef) *actor {
	o := p.o
	o.mu.Lock()
	defer o.mu.Unlock()
	if a := o.mu.actors[sid]; a != nil {
		return a
	}
	if o.ctx.Err() != nil {
		return nil
	}
	a := newActor(o, p, sid)
	o.mu.actors[sid] = a
	o.metrics.resident.Inc()
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		a.run(p.ctx)
	}()
	return a
}

func (p *partition) remove(a *actor) {
	o := p.o
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.mu.actors[a.sid] == a {
		delete(o.mu.actors, a.sid)
		o.metrics.resident.Dec()
	}
}

func (p *partition) done(seq uint64) {
	if seq > 0 {
		p.in.Done(seq)
	}
}
