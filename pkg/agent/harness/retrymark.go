package harness

import (
	"context"
	"time"

	"github.com/cairn-agents/cairn/pkg/agent"
	"github.com/cairn-agents/cairn/pkg/events"
)

// Retry marks. A failed model call is recorded as an assistant message
// with stopReason error, which on its own reads as the end of the run: a
// client waiting for the session to be idle, the projector's status and
// the gateway's command status would all take it as settled while the
// harness backs off and calls the model again. So the harness holds an
// error message back until it has decided what follows, and records it
// with a retry mark (events.RetryMark: attempt, delay, transient or
// overflow) when it retries: the log itself says the run goes on, in the
// very entry that would otherwise end it, and everything that reads the
// log — live, from a rebuild, after a crash — agrees. The next assistant
// message settles the run as usual. A run that ends with no message after
// a marked one (the compaction before an overflow retry failed, or was
// aborted) is closed with a turn_interrupted entry carrying the run's
// error.
//
// A reply that succeeded but left the context past the compaction
// threshold (or silently overflowed it) is followed by a compaction at the
// save point, and on its own would read as the end of the run too. The
// harness decides when it records the reply that the compaction follows,
// and records it with a compaction mark (code events.RetryCompaction): the
// run settles on the compaction entry. A compaction that fails, or never
// starts (the run was aborted), is closed with a turn_interrupted entry
// like a retry never made.
//
// The hold is short: the loop asks the harness to recover right after the
// message (Config.Recover), and any other event of the run records a held
// message first, unmarked, so the log keeps the order of the events.

// holdError holds ev back when it is the end of an error message, after
// recording a message held before; it reports whether it held ev.
func (h *Harness) holdError(ev events.Event) bool {
	if h.run.heldError != nil {
		h.recordHeld(nil)
	}
	if ev.Type != events.EvMessageEnd || h.run.writeErr != nil || ev.Message == nil ||
		ev.Message.Role != events.RoleAssistant || ev.Message.StopReason != events.StopError {
		return false
	}
	h.run.heldError = &ev
	return true
}

// recordHeld records the held error message, with mark if it is retried,
// then publishes its message_end.
func (h *Harness) recordHeld(mark *events.RetryMark) {
	ev := h.run.heldError
	if ev == nil {
		return
	}
	h.run.heldError = nil
	if h.run.writeErr == nil {
		if err := h.appendMarked(h.run.writeCtx, *ev.Message, mark); err != nil {
			h.run.writeErr = err
			h.run.cancel(err)
		} else {
			h.run.retryOpen = mark != nil
		}
	}
	h.publish(*ev)
}

// recordRetry records failure f's error message as retried: code says what
// the retry waits for, delay the back-off.
func (h *Harness) recordRetry(f agent.Failure, code string, delay time.Duration) {
	h.recordHeld(&events.RetryMark{Attempt: f.Attempt, DelayMs: delay.Milliseconds(), Code: code})
}

// compactionMark returns the compaction mark of m when m is a reply the
// save point compacts after, and notes that the compaction is owed; nil
// otherwise. Replies that call tools are not marked: their run goes on.
func (h *Harness) compactionMark(m events.Message) *events.RetryMark {
	h.run.marked, h.run.compactionOpen = "", false
	if m.Role != events.RoleAssistant || m.StopReason == events.StopToolUse ||
		m.StopReason == events.StopError || m.StopReason == events.StopAborted {
		return nil
	}
	if h.run.marked = h.compactionDue(m); h.run.marked == "" {
		return nil
	}
	h.run.compactionOpen = true
	return &events.RetryMark{Code: events.RetryCompaction}
}

// closeRetry settles, at the end of a run, a retried error message no
// message followed (or a marked reply no compaction followed); runErr is
// why the run ended.
func (h *Harness) closeRetry(runErr error) {
	h.recordHeld(nil)
	open := h.run.retryOpen
	h.run.retryOpen = false
	if !open || h.run.writeErr != nil {
		return
	}
	reason := "the run ended before the model was called again"
	if h.run.compactionOpen {
		reason = "the compaction after the run's last reply was not recorded"
	}
	h.run.compactionOpen = false
	if runErr != nil {
		reason += ": " + runErr.Error()
	}
	h.wmu.Lock()
	stored, err := h.cfg.Session.Append(context.WithoutCancel(h.run.writeCtx), events.Entry{Type: events.EntryTurnInterrupted, Reason: reason})
	h.wmu.Unlock()
	if err != nil {
		h.log.Warn("cannot close a retry the run did not make", "session", h.cfg.SessionID, "err", err)
		return
	}
	h.run.lastLeafID = stored.ID
}
