package harness

import (
	"context"
	"errors"
	"fmt"

	"github.com/cairn-agents/cairn/pkg/agent/hook"
	"github.com/cairn-agents/cairn/pkg/compaction"
	"github.com/cairn-agents/cairn/pkg/events"
)

// Compact summarizes the history of the active branch and records a
// compaction entry. It needs idle (else ErrBusy); a session_before_compact
// hook may cancel it (ErrCancelled).
func (h *Harness) Compact(ctx context.Context, instructions string) (err error) {
	if err := h.begin(PhaseCompaction); err != nil {
		return err
	}
	ctx, cancel := h.cancellable(ctx)
	defer cancel(nil)
	defer func() {
		if ferr := h.end(ctx); err == nil {
			err = ferr
		}
	}()
	_, err = h.compact(ctx, "manual", instructions, false)
	return err
}

// cancellable returns a ctx that Abort cancels for the operation in
// progress.
func (h *Harness) cancellable(ctx context.Context) (context.Context, context.CancelCauseFunc) {
	ctx, cancel := context.WithCancelCause(ctx)
	h.mu.Lock()
	h.mu.cancel = cancel
	h.mu.Unlock()
	return ctx, cancel
}

// compact runs the compactor and returns the new context. Every attempt
// that gets past reading the session is one compaction_start and one
// compaction_end (with the error when it failed; for an overflow the error
// says the recovery failed, and willRetry says the call is made again).
func (h *Harness) compact(ctx context.Context, reason, instructions string, willRetry bool) (_ []events.Message, err error) {
	ctx, span := h.startCompaction(ctx, reason)
	defer func() { endSpan(span, err) }()
	if err := h.flush(ctx); err != nil {
		return nil, err
	}
	_, path, err := h.cfg.Session.Path(context.WithoutCancel(ctx))
	if err != nil {
		return nil, fmt.Errorf("harness: read session: %w", err)
	}
	h.publish(events.Event{Type: events.EvCompactionStart, Compaction: &events.Compaction{Reason: reason}})
	fail := func(err error) ([]events.Message, error) {
		if reason == "overflow" {
			err = overflowFailed(err)
		}
		h.publish(events.Event{Type: events.EvCompactionEnd, Compaction: &events.Compaction{Reason: reason, Error: err.Error(), Aborted: ctx.Err() != nil}})
		return nil, err
	}
	d := hook.SessionBeforeCompact(ctx, h.hooks, hook.SessionBeforeCompactEvent{Reason: reason, Instructions: instructions, Path: path})
	if d.Cancel {
		return fail(fmt.Errorf("compaction %w: %s", ErrCancelled, d.Reason))
	}
	if d.Summary == "" && h.cfg.Compactor == nil {
		return fail(ErrNoCompactor)
	}
	// A hook's own summary replaces the compactor's.
	res := Compaction{Summary: d.Summary, FirstKeptEntryID: d.FirstKeptEntryID, Details: d.Details}
	fromHook := d.Summary != ""
	if !fromHook {
		res, err = h.cfg.Compactor(ctx, CompactRequest{Reason: reason, Instructions: instructions, Path: path, Model: h.Model()})
		if err != nil {
			return fail(fmt.Errorf("compaction: %w", err))
		}
	}
	h.wmu.Lock()
	stored, err := h.cfg.Session.Append(context.WithoutCancel(ctx), events.Entry{
		Type: events.EntryCompaction, Summary: res.Summary, FirstKeptEntryID: res.FirstKeptEntryID,
		TokensBefore: res.TokensBefore, Details: res.Details, FromHook: fromHook,
	})
	h.wmu.Unlock()
	if err != nil {
		return fail(fmt.Errorf("harness: record compaction: %w", err))
	}
	msgs, err := h.reload(ctx)
	if err != nil {
		return fail(err)
	}
	h.publish(events.Event{Type: events.EvCompactionEnd, Compaction: &events.Compaction{Reason: reason,
		TokensBefore: res.TokensBefore, Summary: res.Summary, EntryID: stored.ID, WillRetry: willRetry}})
	return msgs, nil
}

// overflowFailed is the error of an overflow recovery whose compaction
// failed: it says so, and when there was nothing to compact, it says that.
func overflowFailed(err error) error {
	if errors.Is(err, compaction.ErrNothingToCompact) {
		return fmt.Errorf("%w: %w: the context holds no earlier history to summarize; shorten the message or switch to a model with a larger context window",
			ErrOverflowRecovery, compaction.ErrNothingToCompact)
	}
	return fmt.Errorf("%w: %w", ErrOverflowRecovery, err)
}
