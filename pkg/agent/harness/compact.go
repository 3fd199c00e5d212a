package harness

import (
	"context"
	"fmt"

	"github.com/cairn-agents/cairn/pkg/agent/hook"
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
	_, err = h.compact(ctx, "manual", instructions)
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

// compact runs the compactor and returns the new context.
func (h *Harness) compact(ctx context.Context, reason, instructions string) (_ []events.Message, err error) {
	ctx, span := h.startCompaction(ctx, reason)
	defer func() { endSpan(span, err) }()
	if err := h.flush(ctx); err != nil {
		return nil, err
	}
	path, err := h.cfg.Session.Path(context.WithoutCancel(ctx))
	if err != nil {
		return nil, fmt.Errorf("harness: read session: %w", err)
	}
	d := hook.SessionBeforeCompact(ctx, h.hooks, hook.SessionBeforeCompactEvent{Reason: reason, Instructions: instructions, Path: path})
	if d.Cancel {
		return nil, fmt.Errorf("compaction %w: %s", ErrCancelled, d.Reason)
	}
	if d.Summary == "" && h.cfg.Compactor == nil {
		return nil, ErrNoCompactor
	}
	h.publish(events.Event{Type: events.EvCompactionStart, Compaction: &events.Compaction{Reason: reason}})
	fail := func(err error) ([]events.Message, error) {
		h.publish(events.Event{Type: events.EvCompactionEnd, Compaction: &events.Compaction{Reason: reason, Error: err.Error(), Aborted: ctx.Err() != nil}})
		return nil, err
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
	h.publish(events.Event{Type: events.EvCompactionEnd, Compaction: &events.Compaction{Reason: reason, TokensBefore: res.TokensBefore, Summary: res.Summary, EntryID: stored.ID}})
	return msgs, nil
}

// NavigateOptions are the options of a navigation.
type NavigateOptions struct {
	Summarize    bool // summarize the branch being left (needs a Summarizer)
	Instructions string
}

// Navigate moves the active leaf to target (nil = before the first entry),
// recording a leaf entry and, when asked, a branch summary of the branch it
// leaves. It needs idle (else ErrBusy); a session_before_tree hook may
// cancel it (ErrCancelled).
func (h *Harness) Navigate(ctx context.Context, target *string, opts NavigateOptions) (err error) {
	if err := h.begin(PhaseBranchSummary); err != nil {
		return err
	}
	ctx, cancel := h.cancellable(ctx)
	defer cancel(nil)
	defer func() {
		if ferr := h.end(ctx); err == nil {
			err = ferr
		}
	}()
	if c := hook.SessionBeforeTree(ctx, h.hooks, hook.SessionBeforeTreeEvent{TargetID: target, Summarize: opts.Summarize}); c.Cancel {
		return fmt.Errorf("navigation %w: %s", ErrCancelled, c.Reason)
	}
	wctx := context.WithoutCancel(ctx)
	path, err := h.cfg.Session.Path(wctx)
	if err != nil {
		return fmt.Errorf("harness: read session: %w", err)
	}
	var summary string
	if opts.Summarize && h.cfg.Summarizer != nil && len(path) > 0 {
		summary, err = h.cfg.Summarizer(ctx, SummaryRequest{Branch: path, TargetID: target, Instructions: opts.Instructions})
		if err != nil {
			return fmt.Errorf("branch summary: %w", err)
		}
	}
	h.wmu.Lock()
	_, err = h.cfg.Session.Append(wctx, events.Entry{Type: events.EntryLeaf, TargetID: target})
	if err == nil && summary != "" {
		_, err = h.cfg.Session.Append(wctx, events.Entry{Type: events.EntryBranchSummary, FromID: path[len(path)-1].ID, Summary: summary})
	}
	h.wmu.Unlock()
	if err != nil {
		return fmt.Errorf("harness: record navigation: %w", err)
	}
	_, err = h.reload(ctx)
	return err
}
