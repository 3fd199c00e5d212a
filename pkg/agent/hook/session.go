package hook

import (
	"context"
	"encoding/json"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/llm"
)

// Cancel stops the operation when Cancel is set.
type Cancel struct {
	Cancel bool   `json:"cancel,omitempty"`
	Reason string `json:"reason,omitempty"`
}

// SessionBeforeCompactEvent is emitted before a compaction, with the path
// (root to leaf) it would summarise.
type SessionBeforeCompactEvent struct {
	Reason       string         `json:"reason"` // manual | threshold | overflow
	Instructions string         `json:"instructions,omitempty"`
	Path         []events.Entry `json:"path,omitempty"`
}

// CompactDecision answers session_before_compact: cancel the compaction, or
// supply its summary instead of the compactor (with the first entry kept
// after it; empty keeps none), or neither.
type CompactDecision struct {
	Cancel           bool            `json:"cancel,omitempty"`
	Reason           string          `json:"reason,omitempty"`
	Summary          string          `json:"summary,omitempty"`
	FirstKeptEntryID string          `json:"firstKeptEntryId,omitempty"`
	Details          json.RawMessage `json:"details,omitempty"`
}

func (SessionBeforeCompactEvent) Name() string           { return "session_before_compact" }
func (SessionBeforeCompactEvent) result(CompactDecision) {}

// SessionBeforeTreeEvent is emitted before a navigation of the session tree.
type SessionBeforeTreeEvent struct {
	TargetID  *string `json:"targetId"`
	Summarize bool    `json:"summarize,omitempty"`
}

func (SessionBeforeTreeEvent) Name() string  { return "session_before_tree" }
func (SessionBeforeTreeEvent) result(Cancel) {}

// SessionBeforeCompact asks the handlers in order and stops at the first
// that cancels or supplies a summary. Failing handlers are reported and
// skipped.
func SessionBeforeCompact(ctx context.Context, r *Registry, ev SessionBeforeCompactEvent) CompactDecision {
	var out CompactDecision
	emit(ctx, r, ev, nil, func(d CompactDecision) bool {
		if d.Cancel || d.Summary != "" {
			out = d
			return false
		}
		return true
	}, nil)
	return out
}

// SessionBeforeTree asks the handlers in order and stops at the first cancel.
// Failing handlers are reported and skipped.
func SessionBeforeTree(ctx context.Context, r *Registry, ev SessionBeforeTreeEvent) Cancel {
	return firstCancel(ctx, r, ev)
}

func firstCancel[E Event[Cancel]](ctx context.Context, r *Registry, ev E) Cancel {
	var out Cancel
	emit(ctx, r, ev, nil, func(c Cancel) bool {
		if c.Cancel {
			out = c
			return false
		}
		return true
	}, nil)
	return out
}

// NextTurnEvent is emitted at each save point (after a turn's tool results
// are recorded), with the context and model the next call would use.
type NextTurnEvent struct {
	Messages []events.Message `json:"messages"`
	Model    llm.Model        `json:"model"`
}

// NextTurnResult replaces the next call's messages or model (nil = keep)
// and stops the run after this turn when Stop is set.
type NextTurnResult struct {
	Messages []events.Message `json:"messages,omitempty"`
	Model    *llm.Model       `json:"model,omitempty"`
	Stop     bool             `json:"stop,omitempty"`
}

func (NextTurnEvent) Name() string          { return "next_turn" }
func (NextTurnEvent) result(NextTurnResult) {}

// NextTurn chains the handlers: each sees the messages and model the
// previous one left. Any handler may stop the run. Failing handlers are
// reported and skipped.
func NextTurn(ctx context.Context, r *Registry, ev NextTurnEvent) (out NextTurnResult) {
	if !r.Has(ev.Name()) {
		return out
	}
	emit(ctx, r, ev,
		func(NextTurnEvent) NextTurnEvent { return ev },
		func(res NextTurnResult) bool {
			if res.Messages != nil {
				ev.Messages, out.Messages = res.Messages, res.Messages
			}
			if res.Model != nil {
				m := *res.Model
				ev.Model, out.Model = m, &m
			}
			out.Stop = out.Stop || res.Stop
			return true
		}, nil)
	return out
}
