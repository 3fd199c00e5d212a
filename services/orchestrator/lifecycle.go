package orchestrator

import "github.com/cairn-agents/cairn/services/orchestrator/internal/lifecycle"

// An actor's life is one state, a lifecycle.Machine (the package doc draws
// the diagram and lists the transitions): loading while it starts, idle or
// running (settling once the run's agent_end went out or the actor aborted
// it), waiting while a run's batch waits for approvals or sub-agents,
// shrunk while idle or waiting for ShrinkAfter, handing over when it can no
// longer serve its session, evicted once it has left. Every change goes
// through to or move, below; the shrunk gauge follows the moves, Resident
// reads the states. The callers:
//
//	loading → idle                 run, once the session is loaded (or has no log)
//	loading, idle → running        startRun (a recovery, a prompt, a compaction...)
//	running → settling             publish (agent_end, run goroutine), abort
//	running, settling → idle       afterRun
//	idle → shrunk, shrunk → idle   shrink, restore
//	running → waiting              afterRun, for a run that parked calls (approvals.go)
//	loading → waiting              loadWaiting, for a log that ends in a parked batch
//	waiting → running              resume (the last answer, an abort, an expiry)
//	waiting → shrunk → waiting     shrink, restore
//	… → handing over → evicted     handOver
//	… → evicted                    evictIfEmpty (idle timeout, EvictIdle), evict (shutdown)

// to moves the actor to next and returns the state it left: every change
// of its state but one (move) goes through here, and the shrunk gauge
// follows the moves in and out of shrunk. A move the table refuses is a
// bug: it is logged, and the state stays.
func (a *actor) to(next lifecycle.State) lifecycle.State {
	prev, err := a.state.To(next)
	if err != nil {
		a.log.Error(msgRefusedMove, "err", err)
		return prev
	}
	a.moved(prev, next)
	return prev
}

// move moves the actor from → to if it is in from; the run goroutine
// settles the run with it.
func (a *actor) move(from, to lifecycle.State) {
	moved, err := a.state.Move(from, to)
	if err != nil {
		a.log.Error(msgRefusedMove, "err", err)
	}
	if moved {
		a.moved(from, to)
	}
}

// msgRefusedMove is logged for a move the lifecycle table refuses.
const msgRefusedMove = "bug: the actor's state cannot change so"

func (a *actor) moved(prev, next lifecycle.State) {
	if next == lifecycle.Shrunk {
		a.o.metrics.shrunk.Inc()
	}
	if prev == lifecycle.Shrunk {
		a.o.metrics.shrunk.Dec()
	}
}

func (a *actor) is(s lifecycle.State) bool { return a.state.State() == s }

// busy reports whether a run is in progress.
func (a *actor) busy() bool { return a.state.State().Busy() }

// evictIfEmpty evicts the actor when its mailbox is empty.
func (a *actor) evictIfEmpty() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.mu.box) > 0 {
		return false
	}
	a.to(lifecycle.Evicted)
	return true
}

// evict makes the actor leave, whatever its mailbox holds: the partition
// is stopping, and its next owner reads those commands again.
func (a *actor) evict() {
	a.mu.Lock()
	a.to(lifecycle.Evicted)
	a.mu.Unlock()
}
