package orchestrator

import (
	"context"
	"time"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/session"
	"github.com/cairn-agents/cairn/services/orchestrator/internal/lifecycle"
)

// An idle session shrinks: ShrinkAfter after it settles, its actor drops the
// harness (its messages, settings and hooks), the command ids applied, the
// store's tool-call index and the session's decoded entries, keeping only
// the stored records (sequence, bytes, digest) and the tools it resolved.
// The next command restores it exactly as a load from the log would: the
// entries are decoded again, the indexes rebuilt and a new harness built
// from the session. A shrunk session is still resident: it appends with its
// expected sequence and parent digest as before, with no read of the log.

// shrink drops what an idle session can rebuild, if nothing would be lost:
// idle → shrunk.
func (a *actor) shrink() {
	if !(a.is(lifecycle.Idle) || a.is(lifecycle.Waiting)) || a.st == nil || a.h == nil || len(a.deferred) > 0 || !a.h.Disposable() {
		return
	}
	a.cmds.Lock()
	pending := len(a.cmds.pending) > 0 || len(a.cmds.gates) > 0
	a.cmds.Unlock()
	if pending || !a.st.shrink() {
		return
	}
	// Nothing appends while the actor is idle: no command can be applied
	// between the check and here.
	a.cmds.Lock()
	a.cmds.applied = map[string]bool{} // rebuilt by restore
	a.cmds.Unlock()
	a.h = nil
	a.shrunkWaiting = a.is(lifecycle.Waiting)
	a.to(lifecycle.Shrunk)
}

// restore undoes shrink before the actor handles a command: shrunk → idle.
func (a *actor) restore(ctx context.Context) error {
	if !a.is(lifecycle.Shrunk) {
		return nil
	}
	var entries []events.Entry
	if err := a.st.expand(func(s *session.Session) { entries = s.Entries() }); err != nil {
		return err
	}
	applied := map[string]bool{}
	for _, e := range entries {
		if e.CommandID != "" {
			applied[e.CommandID] = true
		}
	}
	a.cmds.Lock()
	a.cmds.applied = applied
	a.cmds.Unlock()
	if err := a.newHarness(ctx); err != nil {
		return err
	}
	if a.shrunkWaiting {
		a.shrunkWaiting = false
		a.to(lifecycle.Waiting)
	} else {
		a.to(lifecycle.Idle)
	}
	return nil
}

// armShrink starts the countdown to shrinking an idle session.
func (a *actor) armShrink(t *time.Timer) {
	if d := a.o.cfg.ShrinkAfter; d > 0 && (a.is(lifecycle.Idle) || a.is(lifecycle.Waiting)) && a.h != nil {
		t.Reset(d)
	}
}

// shrink shrinks the session and drops the tool-call index, unless an
// entry is waiting for a command's stamp.
func (st *store) shrink() bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	for _, q := range st.mu.stamps {
		if len(q) > 0 {
			return false
		}
	}
	st.mu.s.Shrink()
	st.mu.calls = map[string]string{} // rebuilt by expand
	return true
}

// expand decodes the session again and rebuilds the tool-call index; f sees
// the session under the lock.
func (st *store) expand(f func(*session.Session)) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	if err := st.mu.s.Expand(); err != nil {
		return err
	}
	st.mu.calls = map[string]string{}
	recs := st.mu.s.Records()
	for i := range recs {
		st.noteCallsLocked(&recs[i].Entry)
	}
	f(st.mu.s)
	return nil
}
