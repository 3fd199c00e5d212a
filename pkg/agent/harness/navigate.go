package harness

import (
	"context"
	"fmt"

	"github.com/cairn-agents/cairn/pkg/agent/hook"
	"github.com/cairn-agents/cairn/pkg/events"
)

// NavigateOptions are the options of a navigation.
type NavigateOptions struct {
	Summarize    bool // summarize the branch being left (needs a Summarizer)
	Instructions string
}

// Navigation is what a navigation did.
type Navigation struct {
	// Unchanged: the target was the active leaf already; nothing was
	// written (no leaf entry, no summary, no hook called).
	Unchanged bool
	// Leaf is the new active leaf (nil = before the first entry).
	Leaf *string
	// EditorText is the text of the user or custom message navigated to,
	// handed back for editing: the leaf moved to that message's parent, so
	// sending the text again (changed or not) makes a new branch there.
	EditorText string
}

// Navigate moves the active leaf as pi's tree navigation does. Navigating
// to a user message (or a custom message) moves the leaf to its parent and
// hands its text back (Navigation.EditorText); navigating to any other
// entry makes that entry the leaf; navigating to the active leaf changes
// nothing and writes nothing. target nil is before the first entry.
//
// A move is a leaf entry (naming the selected entry when the leaf went to
// its parent: [events.Entry.LeafSelected]) and, when asked, a branch
// summary of the branch left. It needs idle (else ErrBusy); a
// session_before_tree hook may cancel it (ErrCancelled); a target not in
// the session is ErrNoEntry.
func (h *Harness) Navigate(ctx context.Context, target *string, opts NavigateOptions) (nav Navigation, err error) {
	if err := h.begin(PhaseBranchSummary); err != nil {
		return nav, err
	}
	ctx, cancel := h.cancellable(ctx)
	defer cancel(nil)
	defer func() {
		if ferr := h.end(ctx); err == nil {
			err = ferr
		}
	}()
	wctx := context.WithoutCancel(ctx)
	_, path, err := h.cfg.Session.Path(wctx)
	if err != nil {
		return nav, fmt.Errorf("harness: read session: %w", err)
	}
	var leaf *string
	if len(path) > 0 {
		leaf = &path[len(path)-1].ID
	}
	if sameEntry(target, leaf) {
		return Navigation{Unchanged: true, Leaf: leaf}, nil
	}
	nav.Leaf = target
	selected := ""
	if target != nil {
		e, ok, err := h.cfg.Session.Entry(wctx, *target)
		if err != nil {
			return nav, fmt.Errorf("harness: read session: %w", err)
		}
		if !ok {
			return nav, fmt.Errorf("harness: navigate to %q: %w", *target, ErrNoEntry)
		}
		if text, ok := e.EditorText(); ok {
			nav.Leaf, nav.EditorText, selected = e.ParentID, text, e.ID
		}
	}
	if c := hook.SessionBeforeTree(ctx, h.hooks, hook.SessionBeforeTreeEvent{TargetID: target, Summarize: opts.Summarize}); c.Cancel {
		return nav, fmt.Errorf("navigation %w: %s", ErrCancelled, c.Reason)
	}
	var summary string
	if opts.Summarize && h.cfg.Summarizer != nil && len(path) > 0 {
		summary, err = h.cfg.Summarizer(ctx, SummaryRequest{Branch: path, TargetID: target, Instructions: opts.Instructions})
		if err != nil {
			return nav, fmt.Errorf("branch summary: %w", err)
		}
	}
	move := events.Entry{Type: events.EntryLeaf, TargetID: nav.Leaf}
	move.SetLeafSelected(selected)
	h.wmu.Lock()
	_, err = h.cfg.Session.Append(wctx, move)
	if err == nil && summary != "" {
		_, err = h.cfg.Session.Append(wctx, events.Entry{Type: events.EntryBranchSummary, FromID: path[len(path)-1].ID, Summary: summary})
	}
	h.wmu.Unlock()
	if err != nil {
		return nav, fmt.Errorf("harness: record navigation: %w", err)
	}
	_, err = h.reload(ctx)
	return nav, err
}

func sameEntry(a, b *string) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}
