package orchestrator

import (
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Running marks: while a session's run is in progress, the key
// run.<partition>.<sid> exists in the checkpoints bucket. A run cut short by
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
// set mark is awaited (markStored) before the run's commands are marked done.
// A cleared mark is not awaited: one that stays by mistake only makes the
// next owner load a settled session for nothing.
func runKey(p int, sid string) string { return "run." + strconv.Itoa(p) + "." + sid }

// markWait bounds the wait for a mark's acknowledgement.
const markWait = 5 * time.Second

// markRunning sets or clears sid's running mark and returns the publish's
// future (nil if it could not be sent: that is logged).
func (p *partition) markRunning(sid string, running bool) jetstream.PubAckFuture {
	msg := nats.NewMsg("$KV." + checkpointsBucket(p.o.cfg.Names) + "." + runKey(p.n, sid))
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

// setMark marks the actor's session running.
func (a *actor) setMark() {
	a.checkMark()
	if f := a.part.markRunning(a.sid, true); f != nil {
		a.mark.Store(&f)
	}
}

// clearMark clears the mark without waiting.
func (a *actor) clearMark() {
	a.checkMark()
	if f := a.part.markRunning(a.sid, false); f != nil {
		a.mark.Store(&f)
	}
}

// checkMark logs the failure of the last mark written, if it failed.
func (a *actor) checkMark() {
	f := a.mark.Swap(nil)
	if f == nil {
		return
	}
	select {
	case err := <-(*f).Err():
		a.log.Warn("cannot update the running mark", "err", err)
	default:
	}
}

// markStored waits until the last mark written is stored (or failed, which
// is logged, or markWait passed). Called before a command is marked done.
// A future's outcome can be received once: once known, the mark is
// forgotten, so the next command of the same run does not wait for it again.
func (a *actor) markStored() {
	f := a.mark.Load()
	if f == nil {
		return
	}
	defer a.mark.CompareAndSwap(f, nil)
	select {
	case <-(*f).Ok():
		return
	case err := <-(*f).Err():
		a.log.Warn("cannot update the running mark", "err", err)
		return
	default:
	}
	t := time.NewTimer(markWait)
	defer t.Stop()
	select {
	case <-(*f).Ok():
	case err := <-(*f).Err():
		a.log.Warn("cannot update the running mark", "err", err)
	case <-t.C:
		a.log.Warn("the running mark was not acknowledged in time", "wait", markWait)
	}
}
