package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/cairn-agents/cairn/pkg/agent"
	"github.com/cairn-agents/cairn/pkg/events"
)

// Retry marks. A failed model call is recorded as an assistant message
// with stopReason error, which on its own reads as the end of the run: a
// client waiting for the session to be idle, the projector's status and
// the gateway's command status would all take it as settled while the
// harness backs off and calls the model again. So before it retries, the
// harness appends a retry entry after the error message (events.EntryRetry):
// the log itself says the run goes on, and everything that reads the log —
// live, from a rebuild, after a crash — agrees. The next assistant message
// settles it as usual. A run that ends with no message after its last retry
// entry (the compaction before an overflow retry failed, or was aborted) is
// closed with a turn_interrupted entry carrying the run's error.

// recordRetry appends the retry entry of failure f: code says what the
// retry waits for, delay the back-off. A failed append ends the run like
// any failed write.
func (h *Harness) recordRetry(f agent.Failure, code string, delay time.Duration) {
	if h.run.writeErr != nil {
		return
	}
	details, _ := json.Marshal(struct {
		Attempt int   `json:"attempt"`
		DelayMs int64 `json:"delayMs"`
	}{f.Attempt, delay.Milliseconds()})
	reason := f.Message.ErrorMessage
	if reason == "" && f.Err != nil {
		reason = f.Err.Error()
	}
	e := events.Entry{Type: events.EntryRetry, Reason: reason, Code: code, Details: details}
	h.wmu.Lock()
	stored, err := h.cfg.Session.Append(context.WithoutCancel(h.run.writeCtx), e)
	h.wmu.Unlock()
	if err != nil {
		h.run.writeErr = fmt.Errorf("harness: record retry: %w", err)
		h.run.cancel(h.run.writeErr)
		return
	}
	h.run.lastLeafID = stored.ID
	h.run.retryOpen = true
}

// closeRetry settles, at the end of a run, a retry entry no message
// followed; runErr is why the run ended.
func (h *Harness) closeRetry(runErr error) {
	open := h.run.retryOpen
	h.run.retryOpen = false
	if !open || h.run.writeErr != nil {
		return
	}
	reason := "the run ended before the model was called again"
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
