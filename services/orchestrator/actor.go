package orchestrator

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cairn-agents/cairn/pkg/agent/harness"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/session"
	"github.com/cairn-agents/cairn/services/orchestrator/internal/intake"
	"github.com/cairn-agents/cairn/services/orchestrator/internal/lifecycle"
)

// actor owns one session: one goroutine reads its mailbox and drives its
// harness; a run (a prompt, a navigation, a recovery) goes on in a second
// goroutine while the mailbox keeps being read, so steering, follow-ups and
// aborts reach a running agent. Where it is in its life is one state
// (package lifecycle, whose doc draws the diagram), changed only by to and
// move.
type actor struct {
	sid  events.SessionRef // the session: its tenant and id
	o    *Orchestrator
	part *partition
	log  *slog.Logger

	signal chan struct{} // a mailbox item is waiting
	// retries counts the actors before this one that dropped the session
	// and handed its commands on (handover.go); it paces the reloads.
	retries int
	mu      struct {
		sync.Mutex
		box []item
	}
	// state is the actor's lifecycle. The actor goroutine makes every
	// move but running → settling, which the run goroutine makes when it
	// publishes agent_end; the move to evicted is made under mu, so that
	// enqueue never adds to the mailbox of an actor that left.
	state lifecycle.Machine

	// Owned by the actor goroutine.
	st       *store
	h        *harness.Harness // nil while a recovery runs, and while shrunk
	waits    *waiters
	tools    map[string]*remoteTool
	runDone  chan error
	deferred []intake.Command // commands waiting for the run to end
	snapAt   int              // records in the session at its last snapshot
	// recovering is the number of runs in a row that ended with an error
	// and their turn open; recoverDue asks the run loop to recover the
	// turn again after handoverWait(recovering) (afterRun, recover.go).
	recovering int
	recoverDue bool
	started    bool // session_start was sent (extensions.go)
	eventSeq   atomic.Uint64
	// mark is the last running mark written (marks.go): what the
	// checkpoints bucket was asked to hold, not the actor's state.
	mark atomic.Pointer[markState]
	// approvals is the session's approval policy, read from the log once
	// (approvals.go); the harness's policy calls read it on any goroutine.
	approvals atomic.Pointer[events.Approvals]
	// abortCmd is an abort that came while a run that parked calls was
	// still running: it denies them once the run returns.
	abortCmd *events.Command
	// shrunkWaiting: the shrunk session was waiting, and is again once
	// restored.
	shrunkWaiting bool

	cmds struct {
		sync.Mutex
		pending map[string]intake.Command // taken, not yet finished, by command id
		applied map[string]bool           // command ids named in the log
		gates   map[string]chan struct{}  // closed when the command's entry is in
	}
}

// snapshotEvery is how many new records make a settled session worth a
// new snapshot.
const snapshotEvery = 16

// item is one mailbox message: a command or a tool result.
type item struct {
	cmd    *intake.Command
	result *events.ToolResult
	evict  bool // leave memory now if idle (EvictIdle)
}

func newActor(o *Orchestrator, p *partition, sid events.SessionRef) *actor {
	a := &actor{sid: sid, o: o, part: p, log: o.log.With("tenant", sid.Tenant, "session", sid.ID),
		signal: make(chan struct{}, 1), waits: newWaiters(), runDone: make(chan error, 1)}
	a.cmds.pending = map[string]intake.Command{}
	a.cmds.applied = map[string]bool{}
	a.cmds.gates = map[string]chan struct{}{}
	return a
}

// enqueue adds it to the mailbox; false if the actor was evicted. A tool
// result goes straight to the call waiting for it (waiters is safe for
// concurrent use): waking the actor goroutine only to pass it on would
// add a hop to every tool call.
func (a *actor) enqueue(it item) bool {
	a.mu.Lock()
	if a.state.State() == lifecycle.Evicted {
		a.mu.Unlock()
		return false
	}
	if it.result != nil && it.cmd == nil && !it.evict {
		a.mu.Unlock()
		a.waits.deliver(*it.result)
		return true
	}
	a.mu.box = append(a.mu.box, it)
	a.mu.Unlock()
	select {
	case a.signal <- struct{}{}:
	default:
	}
	return true
}

func (a *actor) take() []item {
	a.mu.Lock()
	defer a.mu.Unlock()
	box := a.mu.box
	a.mu.box = nil
	return box
}

// run is the actor goroutine.
func (a *actor) run(ctx context.Context) {
	defer a.part.remove(a)
	defer func() {
		if a.started {
			a.notify(events.NoticeSessionShutdown, nil)
		}
	}()
	if !a.pace(ctx) {
		a.evict()
		return
	}
	if err := a.load(ctx); err != nil && !errors.Is(err, session.ErrNotFound) {
		a.handOver(nil, "cannot load the session", err)
		return
	}
	if a.is(lifecycle.Loading) { // loaded, or no log yet; a recovery made it running
		a.to(lifecycle.Idle)
	}
	idle := time.NewTimer(a.o.cfg.IdleTimeout)
	defer idle.Stop()
	shrink := time.NewTimer(time.Hour)
	shrink.Stop()
	defer shrink.Stop()
	a.armShrink(shrink)
	retry := time.NewTimer(time.Hour) // recovery of a turn a failed run left open
	retry.Stop()
	defer retry.Stop()
	expiry := time.NewTimer(time.Hour)
	expiry.Stop()
	defer expiry.Stop()
	a.armExpiry(expiry)
	for {
		select {
		case <-a.signal:
			items := a.take()
			evict := false
			items = slices.DeleteFunc(items, func(it item) bool {
				evict = evict || it.evict
				return it.evict
			})
			if a.is(lifecycle.Shrunk) && len(items) > 0 {
				if err := a.restore(ctx); err != nil {
					a.handOver(items, "cannot restore the shrunk session", err)
					return
				}
			}
			for _, it := range items {
				a.handle(ctx, it)
			}
			if evict && a.evictable() && a.evictIfEmpty() {
				return
			}
		case <-shrink.C:
			a.shrink()
			continue
		case <-retry.C:
			if a.h == nil && a.st != nil && a.is(lifecycle.Idle) && a.needsRecovery() {
				a.startRun(ctx, a.recover)
			}
		case <-expiry.C:
			if a.is(lifecycle.Shrunk) {
				if err := a.restore(ctx); err != nil {
					a.handOver(nil, "cannot restore the shrunk session", err)
					return
				}
			}
			a.expire(ctx)
		case err := <-a.runDone:
			a.afterRun(ctx, err)
		case <-idle.C:
			if a.evictable() && a.evictIfEmpty() {
				return
			}
		case <-ctx.Done():
			if a.is(lifecycle.Running) || a.is(lifecycle.Settling) { // a waiting session has no run goroutine
				if a.h != nil {
					a.h.Abort()
				}
				if err := <-a.runDone; err != nil {
					a.log.Debug("run aborted at shutdown", "err", err)
				}
			}
			a.evict()
			return
		}
		if st := a.st; st != nil && st.gone() {
			why := "another writer appended to this session"
			if st.refused.Load() {
				why = "the partition's lease is fenced or lost"
			}
			a.handOver(nil, why, nil)
			return
		}
		if !idle.Stop() {
			select {
			case <-idle.C:
			default:
			}
		}
		idle.Reset(a.o.cfg.IdleTimeout)
		a.armShrink(shrink)
		a.armExpiry(expiry)
		if a.recoverDue {
			a.recoverDue = false
			retry.Reset(handoverWait(a.recovering))
		}
	}
}

// load reads the session from the log, if it exists, and starts recovery.
func (a *actor) load(ctx context.Context) error {
	s, err := session.Load(ctx, a.o.cfg.Log, a.sid)
	if err != nil {
		return err
	}
	a.attach(s)
	if w := a.wait(); w != nil {
		return a.loadWaiting(ctx, w)
	}
	if a.needsRecovery() {
		a.startRun(ctx, a.recover)
		return nil
	}
	a.reportToParent(ctx) // a report a crash may have lost (subagents.go)
	a.clearMark()         // a mark left by a run that did settle
	return a.newHarness(ctx)
}

// attach makes s the actor's session.
func (a *actor) attach(s *session.Session) {
	a.cmds.Lock()
	for _, e := range s.Entries() {
		if e.CommandID != "" {
			a.cmds.applied[e.CommandID] = true
		}
	}
	a.cmds.Unlock()
	a.st = newStore(s, a.onApplied)
	a.st.appended = a.o.metrics.agent.appended
	a.st.writable, a.st.fenced = a.part.awaitWritable, a.part.fenced
}

// onApplied finishes a command once an entry naming it is durable. It runs
// on whichever goroutine appended.
func (a *actor) onApplied(commandID string) {
	a.cmds.Lock()
	c, ok := a.cmds.pending[commandID]
	delete(a.cmds.pending, commandID)
	a.cmds.applied[commandID] = true
	if g := a.cmds.gates[commandID]; g != nil {
		close(g)
		delete(a.cmds.gates, commandID)
	}
	a.cmds.Unlock()
	if ok && a.markStored() {
		a.part.done(c.Seq)
	}
	a.o.metrics.commandsApplied.Inc()
}

// finish ends a command that needs no entry (its effect was already there).
func (a *actor) finish(commandID string) {
	if a.st != nil {
		a.st.forgetPrincipal(commandID)
	}
	a.cmds.Lock()
	c, ok := a.cmds.pending[commandID]
	delete(a.cmds.pending, commandID)
	a.cmds.Unlock()
	if ok && a.markStored() {
		a.part.done(c.Seq)
	}
}

// startRun runs f on the run goroutine.
func (a *actor) startRun(ctx context.Context, f func(context.Context) error) {
	a.to(lifecycle.Running)
	a.setMark()
	a.part.wg.Add(1)
	go func() {
		defer a.part.wg.Done()
		a.runDone <- f(ctx)
	}()
}

// startPrompt starts a run on msg and waits until the harness has recorded
// msg, so that the log shows the commands of a session in the order they
// came, whatever the next one does.
func (a *actor) startPrompt(ctx context.Context, msg events.Message) {
	if a.refusedOverBudget(ctx, msg.CommandID) {
		return
	}
	gate := make(chan struct{})
	a.cmds.Lock()
	a.cmds.gates[msg.CommandID] = gate
	a.cmds.Unlock()
	a.startRun(ctx, func(ctx context.Context) error { return a.h.Prompt(ctx, msg) })
	select {
	case <-gate:
	case err := <-a.runDone: // the run ended without recording it
		a.cmds.Lock()
		delete(a.cmds.gates, msg.CommandID)
		a.cmds.Unlock()
		a.afterRun(ctx, err)
	case <-ctx.Done():
	}
}

func (a *actor) afterRun(ctx context.Context, err error) {
	if errors.Is(err, harness.ErrWaiting) && ctx.Err() == nil && !a.st.gone() {
		a.parked(ctx) // the mark stays while the session waits
		a.runDeferred(ctx)
		return
	}
	a.abortCmd = nil
	a.to(lifecycle.Idle)
	if a.st != nil && a.st.gone() {
		// Another writer has the session, or this instance may no longer
		// write it (the run loop hands it over next).
		// Its running mark stays: the mark is the session's, not this
		// run's, and the other writer may be running a turn, which must be
		// recovered if it crashes.
		return
	}
	fenced := a.part.writable() != nil
	// A run (or a recovery) that failed with its turn open — an append
	// refused while NATS elected a leader, say — is no settled run: its
	// mark stays, and the turn is recovered from the log after a pause,
	// again until it is closed, as a new owner would recover it. Without
	// this a tool call could keep no result until the next command.
	open := err != nil && ctx.Err() == nil && !fenced && a.st != nil && a.needsRecovery()
	if open {
		a.recovering++
		a.recoverDue = true
		a.h = nil // the recovery writes to the log itself; the harness is read again after it
		a.log.Warn("the run ended with its turn open; recovering it", "err", err, "attempt", a.recovering, "after", handoverWait(a.recovering))
	} else if err == nil {
		a.recovering = 0
	}
	if ctx.Err() == nil && !fenced && !open {
		a.reportToParent(ctx) // a sub-agent's run settled (subagents.go)
		// Only a settled run clears its mark; a stopped one leaves it for
		// the next owner to recover, and a fenced one must not touch the
		// mark, which may be the next owner's already.
		a.clearMark()
	}
	if err != nil && ctx.Err() == nil {
		a.log.Info("run ended with an error", "err", err)
	}
	if a.st != nil {
		// An abort that came too late to stop anything applied nothing:
		// its outcome says so (a client waiting for it is answered, and a
		// replay does not abort a later run with it).
		for _, id := range a.st.unstamp(stampAbort) {
			if a.recordNoEffect(events.Command{ID: id, Type: events.CmdAbort}) {
				a.finish(id)
			}
		}
		// The session settled: snapshot it once enough is new, so the next
		// cold load, on whichever instance, reads one object and a short
		// tail (each snapshot rewrites the whole session).
		if err := a.st.do(func(s *session.Session) error {
			if n := s.Len(); n-a.snapAt >= snapshotEvery && !fenced {
				a.snapAt = n
				return s.Snapshot(context.WithoutCancel(ctx))
			}
			return nil
		}); err != nil {
			a.log.Warn("cannot snapshot the session", "err", err)
		}
	}
	if open {
		return // commands wait for the recovery (handleCommand defers them while h is nil)
	}
	if a.h == nil && a.st != nil && ctx.Err() == nil {
		if err := a.newHarness(ctx); err != nil {
			a.log.Error("cannot start the session's harness", "err", err)
			return
		}
	}
	a.runDeferred(ctx)
}

// runDeferred handles the commands that waited for the run to end.
func (a *actor) runDeferred(ctx context.Context) {
	deferred := a.deferred
	a.deferred = nil
	for i := range deferred {
		a.handleCommand(ctx, deferred[i])
	}
}

func (a *actor) handle(ctx context.Context, it item) {
	switch {
	case it.result != nil:
		a.waits.deliver(*it.result)
	case it.cmd != nil:
		if a.is(lifecycle.Settling) {
			// The run published its agent_end and is returning, or was
			// aborted and is ending: a client that sent this command upon
			// that event, or after the abort was recorded, must find the
			// session idle, not busy.
			a.afterRun(ctx, <-a.runDone)
		}
		c := *it.cmd
		if c.Err == nil {
			a.cmds.Lock()
			applied := a.cmds.applied[c.Cmd.ID]
			if !applied {
				a.cmds.pending[c.Cmd.ID] = c
			}
			a.cmds.Unlock()
			if applied {
				a.part.done(c.Seq)
				return
			}
			if a.finishedBefore(ctx, c.Seq, c.Cmd.ID) {
				a.finish(c.Cmd.ID) // refused without a log, or applied with no effect, by an earlier owner
				return
			}
		}
		a.handleCommand(ctx, c)
	}
}

// publish sends an agent event to live clients. Events may be lost without
// harm (the log is the record), so it does not wait for the stream; the
// partition's event queue encodes and publishes them in order, off the
// run's path.
func (a *actor) publish(ev events.Event) {
	a.o.metrics.agent.observe(a.sid.String(), &ev)
	if ev.Type == events.EvAgentEnd {
		a.move(lifecycle.Running, lifecycle.Settling)
	}
	a.noticeOf(&ev)
	ev.SessionID = a.sid.ID
	ev.Seq = a.eventSeq.Add(1)
	if ev.Time == "" {
		ev.Time = events.FormatTime(time.Now())
	}
	a.part.events.push(a.sid, ev)
}
