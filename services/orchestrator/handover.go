package orchestrator

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/cairn-agents/cairn/services/orchestrator/internal/intake"
	"github.com/cairn-agents/cairn/services/orchestrator/internal/lifecycle"
)

// An actor that can no longer serve its session — another writer appended
// to it (two instances held the partition while leases were in doubt), or
// the session could not be loaded or restored — hands the commands it had
// taken but not finished, and those still in its mailbox, to a new actor of
// the same partition. The new actor loads the session from the log, so it
// sees what the other writer did: a command an entry already names is
// finished without being applied again; the others are handled in stream
// order. Without this, those commands would wait until the partition moved
// to another instance, which reads again from the checkpoint: while this
// instance keeps the partition, never.
//
// The new actor waits before loading, longer after each handover in a row
// (up to maxHandoverWait), so that two instances holding one partition do
// not take turns reloading the session as fast as they can until one of
// them loses its lease.

// maxHandoverWait caps the wait of an actor that follows a handover.
const maxHandoverWait = 5 * time.Second

func handoverWait(retries int) time.Duration {
	if retries <= 0 {
		return 0
	}
	return min(100*time.Millisecond<<min(retries-1, 16), maxHandoverWait)
}

// handOver stops the actor and passes its unfinished commands, and the
// items it took from its mailbox but did not handle, to a new actor:
// handing over, then evicted once its mailbox is taken.
func (a *actor) handOver(taken []item, why string, err error) {
	if prev := a.to(lifecycle.HandingOver); prev == lifecycle.Running || prev == lifecycle.Settling { // waiting has no run goroutine
		if a.h != nil { // nil while recovery runs
			a.h.Abort()
		}
		if err := <-a.runDone; err != nil {
			a.log.Debug("run aborted for a handover", "err", err)
		}
	}
	a.deferred = nil // still pending: carried below
	p, o := a.part, a.o
	o.mu.Lock()
	defer o.mu.Unlock()
	// Under o.mu, route cannot reach this actor between taking its mailbox
	// and the new actor's start: a command routed meanwhile goes to the new
	// actor, after the carried ones, in stream order.
	a.mu.Lock()
	a.to(lifecycle.Evicted)
	taken = append(taken, a.mu.box...)
	a.mu.box = nil
	a.mu.Unlock()
	var carry []item
	seen := map[uint64]bool{}
	add := func(c intake.Command) {
		if !seen[c.Seq] {
			seen[c.Seq] = true
			carry = append(carry, item{cmd: &c})
		}
	}
	a.cmds.Lock()
	for _, c := range a.cmds.pending {
		add(c)
	}
	a.cmds.Unlock()
	for _, it := range taken {
		if it.cmd != nil {
			add(*it.cmd)
		}
	}
	slices.SortFunc(carry, func(x, y item) int { return cmp.Compare(x.cmd.Seq, y.cmd.Seq) })
	if o.mu.actors[a.sid] == a {
		delete(o.mu.actors, a.sid)
		o.metrics.resident.Dec()
	}
	log := a.log.With("commands", len(carry), "handovers", a.retries+1)
	if err != nil {
		log = log.With("err", err)
	}
	if p.ctx.Err() != nil || len(carry) == 0 {
		// The partition is going (its next owner reads from the
		// checkpoint, which these commands hold back), or nothing waits.
		log.Warn(why + "; dropping the session")
		return
	}
	log.Warn(why+"; a new actor reloads the session and handles its commands", "after", handoverWait(a.retries+1))
	o.metrics.handovers.Inc()
	n := newActor(o, p, a.sid)
	n.retries = a.retries + 1
	n.mu.box = carry
	n.signal <- struct{}{}
	o.mu.actors[a.sid] = n
	o.metrics.resident.Inc()
	p.wg.Add(1) // this actor's own count keeps the group open
	go func() {
		defer p.wg.Done()
		n.run(p.ctx)
	}()
}

// pace waits before a handed-over actor loads its session; false if ctx
// ended first.
func (a *actor) pace(ctx context.Context) bool {
	d := handoverWait(a.retries)
	if d == 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
