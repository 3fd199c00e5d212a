package harness

import (
	"context"
	"fmt"

	"github.com/cairn-agents/cairn/pkg/agent"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/llm"
	"github.com/cairn-agents/cairn/pkg/tool"
)

// Append records e in the session: now when idle, else held until the next
// save point or the end of the operation. Entries other than messages
// reach the context from the next prompt on.
func (h *Harness) Append(ctx context.Context, e events.Entry) error {
	return h.write(ctx, e, nil)
}

// SetModel makes m the model of the next model call and records a
// model_change. Its provider must be configured.
func (h *Harness) SetModel(ctx context.Context, m llm.Model) error {
	p, ok := h.cfg.Providers[m.Provider]
	if !ok {
		return fmt.Errorf("harness: no provider %q for model %s", m.Provider, m.Ref())
	}
	return h.write(ctx, events.Entry{Type: events.EntryModelChange, Provider: m.Provider, ModelID: m.ID},
		func(s *settings) { s.model, s.provider = m, p })
}

// SetThinkingLevel sets the thinking level of the next model call and
// records a thinking_level_change.
func (h *Harness) SetThinkingLevel(ctx context.Context, level string) error {
	switch level {
	case "off", "minimal", "low", "medium", "high", "xhigh":
	default:
		return fmt.Errorf("harness: unknown thinking level %q (want off, minimal, low, medium, high or xhigh)", level)
	}
	return h.write(ctx, events.Entry{Type: events.EntryThinkingLevelChange, ThinkingLevel: level},
		func(s *settings) { s.thinking = level })
}

// SetTools sets the tools of the next model call and records an
// active_tools_change with their names. Two tools of one name are refused
// (ErrDuplicateTool), changing nothing.
func (h *Harness) SetTools(ctx context.Context, tools []tool.Tool) error {
	if err := uniqueTools(tools); err != nil {
		return fmt.Errorf("harness: %w", err)
	}
	names := make([]string, len(tools))
	for i, t := range tools {
		names[i] = t.Spec().Name
	}
	tools = append([]tool.Tool{}, tools...)
	return h.write(ctx, events.Entry{Type: events.EntryActiveToolsChange, ActiveToolNames: names},
		func(s *settings) { s.tools = tools })
}

// SetSystemPrompt sets the system prompt of the next model call. It is
// configuration the process supplies again on recovery, not a session entry.
func (h *Harness) SetSystemPrompt(p string) {
	h.change(func(s *settings) { s.system = p })
}

// SetStreamOptions sets the stream options of the next model call. Like
// the system prompt they are not recorded in the session.
func (h *Harness) SetStreamOptions(o agent.StreamOptions) {
	h.change(func(s *settings) { s.stream = o })
}

func (h *Harness) change(apply func(*settings)) {
	h.mu.Lock()
	apply(&h.mu.settings)
	h.mu.version++
	h.mu.Unlock()
}

// write applies a change and records e: at once when idle, held when busy.
func (h *Harness) write(ctx context.Context, e events.Entry, apply func(*settings)) error {
	h.mu.Lock()
	if h.mu.phase != PhaseIdle {
		if apply != nil {
			apply(&h.mu.settings)
			h.mu.version++
		}
		h.mu.held = append(h.mu.held, e)
		h.mu.Unlock()
		return nil
	}
	// Idle: write first, so that a failed write changes nothing. Holding
	// mu across the write keeps an operation from starting in between.
	defer h.mu.Unlock()
	h.wmu.Lock()
	_, err := h.cfg.Session.Append(context.WithoutCancel(ctx), e)
	h.wmu.Unlock()
	if err != nil {
		return fmt.Errorf("harness: record %s: %w", e.Type, err)
	}
	if apply != nil {
		apply(&h.mu.settings)
		h.mu.version++
	}
	if e.Type != events.EntryModelChange && e.Type != events.EntryThinkingLevelChange && e.Type != events.EntryActiveToolsChange {
		h.mu.stale = true
	}
	return nil
}

// flush appends the held writes in order. A write that fails stays held,
// with those after it.
func (h *Harness) flush(ctx context.Context) error {
	ctx = context.WithoutCancel(ctx)
	for {
		h.mu.Lock()
		if len(h.mu.held) == 0 {
			h.mu.Unlock()
			return nil
		}
		e := h.mu.held[0]
		h.mu.Unlock()
		h.wmu.Lock()
		_, err := h.cfg.Session.Append(ctx, e)
		h.wmu.Unlock()
		if err != nil {
			return fmt.Errorf("harness: flush held %s: %w", e.Type, err)
		}
		h.mu.Lock()
		h.mu.held = h.mu.held[1:]
		if e.Type != events.EntryModelChange && e.Type != events.EntryThinkingLevelChange && e.Type != events.EntryActiveToolsChange {
			h.mu.stale = true
		}
		h.mu.Unlock()
	}
}

// appendMessage records a message the loop finished.
func (h *Harness) appendMessage(ctx context.Context, m events.Message) error {
	return h.appendMarked(ctx, m, nil)
}

// appendMarked records a message, with the retry mark of an error message
// the harness retries (retrymark.go).
func (h *Harness) appendMarked(ctx context.Context, m events.Message, retry *events.RetryMark) error {
	// No ID: entry ids are the session's to give (Session.Append).
	e := events.Entry{Type: events.EntryMessage, Message: &m, CommandID: m.CommandID, Retry: retry}
	h.wmu.Lock()
	defer h.wmu.Unlock()
	stored, err := h.cfg.Session.Append(context.WithoutCancel(ctx), e)
	if err != nil {
		return fmt.Errorf("harness: record %s message: %w", m.Role, err)
	}
	h.run.lastLeafID = stored.ID
	return nil
}
