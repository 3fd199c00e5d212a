package orchestrator

import (
	"context"
	"strconv"
	"time"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/jsretry"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Running marks: while a session's run is in progress, the key
// run.<partition>.<tenant>.<sid> exists in the checkpoints bucket. A run cut short by
// a crash leaves its mark, and may leave no command to read again (the
// checkpoint already moved past its prompt), so the next owner of the
// partition wakes every marked session: loading it closes the interrupted
// turn.
//
// Marks are written without waiting, so that a prompt does not wait a round
// trip before its run starts: a mark goes out on the orchestrator's
// connection ahead of the run's first append, and the server stores them in
// that order. What the guarantee needs is that the intake's checkpoint never
// passes a command whose run may have no mark: so the acknowledgement of a
// set mark is awaited (markStored) before the run's commands are marked done,
// and a set mark that failed (the connection was to a node just killed) is
// written again first.
// A cleared mark is not awaited: one that stays by mistake only makes the
// next owner load a settled session for nothing.
func runKey(p int, sid events.SessionRef) string {
	return "run." + strconv.Itoa(p) + "." + sid.String()
}

// markWait bounds the wait for a mark's acknowledgement.
const markWait = 5 * time.Second

// markRunning sets or clears sid's running mark and returns the publish's
// future (nil if it could not be sent: that is logged).
func (p *partition) markRunning(sid events.SessionRef, running bool) jetstream.PubAckFuture {
	msg := nats.NewMsg(events.KVSubject(p.o.cfg.Names.CheckpointsBucket(), runKey(p.n, sid)))
	if running {
		msg.Data = []byte(p.o.cfg.Instance)
	} else {
		msg.Header.Set("KV-Operation", "DEL")
	}
	f, err := p.o.js.PublishMsgAsync(msg, jetstream.WithStallWait(markWait))
	if err != nil {
		p.o.log.Warn("cannot update the running mark", "session", sid, "running", running, "err", err)
		return nil
	}
	return f
}

// markState is the last mark an actor wrote: f is nil when the publish
// could not even be sent (the connection was down).
type markState struct {
	f       jetstream.PubAckFuture
	running bool
}

// setMark marks the actor's session running.
func (a *actor) setMark() {
	a.checkMark()
	a.mark.Store(&markState{f: a.part.markRunning(a.sid, true), running: true})
}

// clearMark clears the mark without waiting.
func (a *actor) clearMark() {
	a.checkMark()
	a.mark.Store(&markState{f: a.part.markRunning(a.sid, false)})
}

// checkMark logs the failure of the last mark written, if it failed.
func (a *actor) checkMark() {
	m := a.mark.Swap(nil)
	if m == nil || m.f == nil {
		return
	}
	select {
	case err := <-m.f.Err():
		a.log.Warn("cannot update the running mark", "err", err)
	default:
	}
}

// markStored reports whether the session's running mark, if the last mark
// written sets it, is stored; it is called before a command is marked done,
// so the checkpoint never passes a command whose run has no mark. It waits
// for the publish's acknowledgement (at most markWait); a set mark that
// failed, or was never sent (the connection was down), is written again,
// waiting as long as it takes, until the partition stops: then it reports
// false, and the command stays unfinished, for the next owner to read again
// (which loads the session and closes its turn).
//
// A future's outcome can be received once: once known, the mark is
// forgotten, so the next command of the same run does not wait for it again.
func (a *actor) markStored() bool {
	m := a.mark.Load()
	if m == nil {
		return true
	}
	if a.acked(m.f) || !m.running {
		a.mark.CompareAndSwap(m, nil)
		return true
	}
	err := jsretry.Do(a.part.ctx, func(ctx context.Context) error {
		_, err := a.o.checkpoints.Put(ctx, runKey(a.part.n, a.sid), []byte(a.o.cfg.Instance))
		return err
	})
	if err != nil {
		a.log.Warn("cannot store the running mark; its command stays unfinished for the next owner", "err", err)
		return false
	}
	a.mark.CompareAndSwap(m, nil)
	return true
}

// acked waits for f's acknowledgement, at most markWait; false if the
// publish failed, was never sent (f nil), or was not acknowledged in time.
func (a *actor) acked(f jetstream.PubAckFuture) bool {
	if f == nil {
		return false
	}
	select {
	case <-f.Ok():
		return true
	case err := <-f.Err():
		a.log.Warn("cannot update the running mark", "err", err)
		return false
	default:
	}
	t := time.NewTimer(markWait)
	defer t.Stop()
	select {
	case <-f.Ok():
		return true
	case err := <-f.Err():
		a.log.Warn("cannot update the running mark", "err", err)
	case <-t.C:
		a.log.Warn("the running mark was not acknowledged in time", "wait", markWait)
	}
	return false
}
