package harness

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cairn-agents/cairn/pkg/agent"
	"github.com/cairn-agents/cairn/pkg/agent/hook"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/llm"
	"github.com/cairn-agents/cairn/pkg/sessiontree"
	"github.com/cairn-agents/cairn/pkg/tool"
)

var errAborted = errors.New("aborted")

// Prompt runs the agent on msgs (after any next-turn messages, and before
// any messages before_agent_start hooks inject) and returns when the run
// has settled: the harness is idle again and every write is flushed. It
// fails with ErrBusy, changing nothing, unless the harness is idle.
// Cancelling ctx aborts the run like Abort, without clearing the queues.
func (h *Harness) Prompt(ctx context.Context, msgs ...events.Message) error {
	return h.start(ctx, msgs, modePrompt)
}

// How a run starts.
const (
	modePrompt   = iota // with new messages
	modeContinue        // from the context as it is
	modeResume          // from a parked batch, answered
)

// Continue runs the agent from the session's context as it is, without a
// new message: after a recovery, or to retry by hand. The context must end
// with a user message or a tool result (agent.ErrNothingToContinue).
func (h *Harness) Continue(ctx context.Context) error {
	return h.start(ctx, nil, modeContinue)
}

func (h *Harness) start(ctx context.Context, msgs []events.Message, mode int) (err error) {
	cont := mode != modePrompt
	ctx, span := h.startPrompt(ctx, cont)
	defer func() { endPrompt(span, err) }()
	if !cont && len(msgs) == 0 {
		h.mu.Lock()
		n := len(h.mu.next)
		h.mu.Unlock()
		if n == 0 {
			return ErrNoPrompt
		}
	}
	if err := h.begin(PhaseTurn); err != nil {
		return err
	}
	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	h.mu.Lock()
	h.mu.cancel = cancel
	h.run.version = h.mu.version
	s := h.mu.settings
	h.mu.Unlock()
	h.run.built = SystemPrompt{}
	if h.cfg.SystemPromptFor != nil {
		h.run.built = h.cfg.SystemPromptFor(toolNames(s.tools))
		s.system = h.run.built.Text
		h.mu.Lock()
		h.mu.settings.system = s.system
		h.mu.Unlock()
	}
	h.run.retrying, h.run.compacted, h.run.writeErr = 0, false, nil
	h.run.cancel = cancel
	h.run.writeCtx = ctx
	h.run.agentEnd = nil
	h.run.hookPrompt = nil
	defer func() {
		h.closeRetry(err)
		if ferr := h.end(ctx); err == nil {
			err = ferr
		}
		// agent_end goes out once the harness is idle and every write is
		// flushed: a client that prompts again upon it finds it idle.
		if ev := h.run.agentEnd; ev != nil {
			h.run.agentEnd = nil
			h.publish(*ev)
		}
	}()

	// Writes still held from an operation whose flush failed go first.
	if err := h.flush(ctx); err != nil {
		return err
	}
	msgsCtx, err := h.context(ctx)
	if err != nil {
		return err
	}
	var wait *Wait
	if mode == modeResume {
		// The parked calls have no results yet, and must not get the
		// interrupted ones: read the batch from the log.
		_, path, err := h.cfg.Session.Path(context.WithoutCancel(ctx))
		if err != nil {
			return fmt.Errorf("harness: read session: %w", err)
		}
		if wait = WaitOf(path); wait == nil || !wait.Answered() {
			return ErrNotWaiting
		}
	} else if msgsCtx, err = h.closeInterrupted(runCtx, msgsCtx, s.tools); err != nil {
		return err
	}
	// Next-turn messages leave their queue only now that nothing before
	// the run can fail.
	var prompts []events.Message
	if !cont {
		h.mu.Lock()
		prompts = append(h.mu.next, msgs...)
		h.mu.next = nil
		h.mu.Unlock()
	}
	system := s.system
	if !cont {
		var injected []events.Message
		injected, system = hook.BeforeAgentStart(runCtx, h.hooks, prompts, system)
		prompts = append(prompts, injected...)
		if system != s.system {
			h.run.hookPrompt = &SystemPrompt{Text: system}
		}
	}

	cfg := h.loopConfig(s)
	c := &agent.Context{SystemPrompt: system, Messages: msgsCtx, Tools: s.tools}
	switch mode {
	case modeResume:
		_, err = agent.Resume(runCtx, &cfg, c, wait.batch())
	case modeContinue:
		_, err = agent.Continue(runCtx, &cfg, c)
	default:
		_, err = agent.Run(runCtx, &cfg, c, prompts)
	}
	var parked *agent.ParkedError
	if errors.As(err, &parked) && h.run.writeErr == nil {
		if perr := h.park(ctx, parked); perr != nil {
			h.run.writeErr = perr
		} else {
			err = fmt.Errorf("%w: %w", ErrWaiting, parked)
		}
		h.mu.Lock()
		h.mu.stale = true // the context lacks the batch's results: read it again
		h.mu.Unlock()
	}
	h.mu.Lock()
	h.mu.messages = c.Messages
	if h.run.writeErr != nil {
		// the context holds messages the session may not: read it again
		h.mu.stale = true
	}
	h.mu.Unlock()
	if h.run.writeErr != nil {
		return h.run.writeErr
	}
	return err
}

// context returns the context of the active leaf, read again from the
// session when something other than the agent's messages changed it.
func (h *Harness) context(ctx context.Context) ([]events.Message, error) {
	h.mu.Lock()
	stale, msgs := h.mu.stale, h.mu.messages
	h.mu.Unlock()
	if !stale {
		return msgs, nil
	}
	return h.reload(ctx)
}

func (h *Harness) reload(ctx context.Context) ([]events.Message, error) {
	header, path, err := h.cfg.Session.Path(context.WithoutCancel(ctx))
	if err != nil {
		return nil, fmt.Errorf("harness: read session: %w", err)
	}
	c, err := sessiontree.BuildContext(header, path)
	if err != nil {
		return nil, fmt.Errorf("harness: the session's context: %w", err)
	}
	h.mu.Lock()
	h.mu.messages, h.mu.stale = c.Messages, false
	h.mu.recorded.text, h.mu.recorded.ok = recordedPrompt(path) // a navigation may have changed the branch
	h.mu.Unlock()
	return c.Messages, nil
}

func (h *Harness) loopConfig(s settings) agent.Config {
	return agent.Config{
		Provider:      h.provider(s.provider),
		Model:         s.model,
		ThinkingLevel: s.thinking,
		Stream:        s.stream,
		Hooks:         h.hooks,
		Validator:     h.validator,
		Sink:          h.onEvent,
		SessionID:     h.cfg.SessionID,
		Workspace:     h.cfg.Workspace,
		Steering:      h.takeSteering,
		FollowUp:      h.takeFollowUp,
		SavePoint:     h.savePoint,
		Recover:       h.recover,
		Approval:      h.approval(),
		Parked:        h.onParked,
		Deferred:      h.cfg.Deferred,
	}
}

// onEvent records finished messages, then passes the event on.
func (h *Harness) onEvent(ev events.Event) {
	if h.holdError(ev) {
		return // recorded once the harness decides whether it retries (retrymark.go)
	}
	if ev.Type == events.EvMessageEnd && h.run.writeErr == nil {
		mark := h.compactionMark(*ev.Message)
		if err := h.appendMarked(h.run.writeCtx, *ev.Message, mark); err != nil {
			h.run.writeErr = err
			h.run.cancel(err)
		} else if ev.Message.Role == events.RoleAssistant {
			// the retried call answered; a compaction mark opens anew
			h.run.retryOpen = mark != nil
		}
	}
	if ev.Type == events.EvAgentEnd {
		h.run.agentEnd = &ev // published by start once idle
		return
	}
	h.publish(ev)
	if ev.Type == events.EvMessageEnd && ev.Message.Role == events.RoleAssistant && ev.Message.StopReason != events.StopError {
		if h.run.retrying > 0 {
			h.publish(events.Event{Type: events.EvRetryEnd, Retry: &events.Retry{Attempt: h.run.retrying, MaxAttempts: h.cfg.Retry.max(), Success: ev.Message.StopReason != events.StopAborted}})
			h.run.retrying = 0
		}
		h.run.compacted = false
	}
}

// savePoint flushes held writes, compacts when the context has grown past
// the threshold, and hands the latest configuration to the next model call.
func (h *Harness) savePoint(ctx context.Context, t agent.Turn) agent.NextTurn {
	if err := h.flush(h.run.writeCtx); err != nil && h.run.writeErr == nil {
		h.run.writeErr = err
		h.run.cancel(err)
	}
	var next agent.NextTurn
	reason := h.compactionDue(t.Message)
	if h.run.marked != "" {
		reason = h.run.marked // the reply's mark promised this compaction
	}
	h.run.marked = ""
	if reason != "" && ctx.Err() == nil {
		if reason == "overflow" {
			h.run.compacted = true // this overflow's one compaction
		}
		h.setPhase(PhaseCompaction)
		msgs, err := h.compact(ctx, reason, "", false)
		h.setPhase(PhaseTurn)
		if err != nil {
			// the run goes on; an overflow, if it comes, is handled then
			h.log.Warn("compaction at the save point failed", "session", h.cfg.SessionID, "reason", reason, "err", err)
			h.closeRetry(err)
		} else {
			// the compaction entry settles the marked reply
			h.run.retryOpen, h.run.compactionOpen = false, false
			next.Messages = msgs
		}
	}
	if h.cfg.SystemPromptFor != nil {
		// Built at every save point: what changed during the turn (a
		// skill, the tools) is in the next request, and recorded first.
		h.mu.Lock()
		tools := h.mu.settings.tools
		h.mu.Unlock()
		p := h.cfg.SystemPromptFor(toolNames(tools))
		h.mu.Lock()
		if p.Text != h.mu.settings.system {
			h.mu.settings.system = p.Text
			h.mu.version++
		}
		h.mu.Unlock()
		h.run.built = p
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.mu.version == h.run.version {
		return next
	}
	h.run.version = h.mu.version
	s := h.mu.settings
	if hp := h.run.hookPrompt; hp != nil {
		s.system = hp.Text // the hook's prompt holds for the run
	}
	next.Provider, next.Model, next.ThinkingLevel = h.provider(s.provider), &s.model, &s.thinking
	next.SystemPrompt, next.Tools, next.SetTools, next.Stream = &s.system, s.tools, true, &s.stream
	return next
}

// compactionDue says whether the reply m calls for a compaction at the save
// point, and why: "overflow" for a silent overflow (a successful reply
// whose prompt alone was over the model's context window: the provider
// took it without an error, as some do, and the next call would fail),
// "threshold" when the context plus m leaves less than the reserve free
// in the window; "" for neither. Neither retries m: it succeeded.
func (h *Harness) compactionDue(m events.Message) string {
	if h.cfg.Compactor == nil || m.Usage == nil {
		return ""
	}
	window := h.Model().ContextWindow
	if window <= 0 {
		return ""
	}
	u := m.Usage
	if u.Input+u.CacheRead+u.CacheWrite > window {
		return "overflow"
	}
	if h.cfg.ReserveTokens < 0 {
		return ""
	}
	reserve := h.cfg.ReserveTokens
	if reserve == 0 {
		reserve = 16384
	}
	used := u.TotalTokens
	if used == 0 {
		used = u.Input + u.Output + u.CacheRead + u.CacheWrite
	}
	if used > window-reserve {
		return "threshold"
	}
	return ""
}

// recover decides what a failed model call leads to: a retry after a
// backoff for transient failures, one compaction for an overflow.
func (h *Harness) recover(ctx context.Context, f agent.Failure) agent.Recovery {
	switch llm.KindOf(f.Err) {
	case llm.KindRetryable:
		max := h.cfg.Retry.max()
		if f.Attempt > max {
			if h.run.retrying > 0 {
				h.publish(events.Event{Type: events.EvRetryEnd, Retry: &events.Retry{Attempt: h.run.retrying, MaxAttempts: max, ErrorMessage: f.Message.ErrorMessage}})
				h.run.retrying = 0
			}
			return agent.Recovery{Err: fmt.Errorf("provider still failing after %d retries: %w", max, f.Err)}
		}
		delay := h.cfg.Retry.delay(f.Attempt, f.Err)
		h.recordRetry(f, events.RetryTransient, delay)
		h.setPhase(PhaseRetry)
		h.publish(events.Event{Type: events.EvRetryStart, Retry: &events.Retry{Attempt: f.Attempt, MaxAttempts: max, DelayMs: delay.Milliseconds(), ErrorMessage: f.Message.ErrorMessage}})
		h.run.retrying = f.Attempt
		t := time.NewTimer(delay)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
		}
		h.setPhase(PhaseTurn)
		// After an abort the loop's next call ends the run with an
		// aborted message.
		return agent.Recovery{Retry: true}
	case llm.KindContextOverflow:
		// One compact-and-retry per overflow, as in pi. Either way the run
		// ends with an assistant message that says why (Record), and a
		// compaction_end carries the same error.
		if h.run.compacted {
			err := fmt.Errorf("%w; reduce the context or switch to a model with a larger context window (provider: %w)", ErrOverflow, f.Err)
			h.publish(events.Event{Type: events.EvCompactionEnd, Compaction: &events.Compaction{Reason: "overflow", Error: err.Error()}})
			return agent.Recovery{Err: err, Record: true}
		}
		h.run.compacted = true
		if h.cfg.Compactor != nil {
			h.recordRetry(f, events.RetryOverflow, 0)
		}
		h.setPhase(PhaseCompaction)
		msgs, err := h.compact(ctx, "overflow", "", true)
		h.setPhase(PhaseTurn)
		if err != nil {
			if ctx.Err() != nil {
				return agent.Recovery{Err: err} // aborted: the loop ends the run as aborted
			}
			return agent.Recovery{Err: err, Record: true}
		}
		return agent.Recovery{Retry: true, Messages: msgs}
	}
	return agent.Recovery{}
}

func toolNames(tools []tool.Tool) []string {
	names := make([]string, len(tools))
	for i, t := range tools {
		names[i] = t.Spec().Name
	}
	return names
}
