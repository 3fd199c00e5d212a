package agent

import (
	"context"
	"errors"
	"time"

	"github.com/cairn-agents/cairn/pkg/agent/hook"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/llm"
)

// callModel makes one model call from the current context and records the
// reply (assistant message events, the context, the run's list). A failed
// call gives an assistant message in error or aborted, and the error.
func (r *run) callModel(ctx context.Context) (events.Message, error) {
	m := &r.cfg.Model
	msg := events.Message{Role: events.RoleAssistant, API: m.API, Provider: m.Provider, Model: m.ID}
	started := false
	var err error
	if ctx.Err() != nil {
		err = abortedError(ctx)
	} else {
		lctx, span := r.startLLM(ctx)
		msg, started, err = r.stream(lctx, msg)
		defer endLLM(span, &msg)
	}
	msg.Role = events.RoleAssistant
	if msg.Provider == "" {
		msg.API, msg.Provider, msg.Model = m.API, m.Provider, m.ID
	}
	if err != nil {
		if ctx.Err() != nil || llm.KindOf(err) == llm.KindAborted {
			msg.StopReason = events.StopAborted
			if llm.KindOf(err) != llm.KindAborted {
				err = abortedError(ctx)
			}
		} else if msg.StopReason != events.StopError {
			msg.StopReason = events.StopError
		}
		if msg.ErrorMessage == "" {
			msg.ErrorMessage = err.Error()
		}
	} else if msg.StopReason == "" {
		msg.StopReason = events.StopEnd
		if len(msg.ToolCalls()) > 0 {
			msg.StopReason = events.StopToolUse
		}
	}
	if msg.Usage != nil && msg.Usage.Cost.Total == 0 {
		m.Cost(msg.Usage)
	}
	msg = stamp(msg)
	if !started {
		r.emit(events.Event{Type: events.EvMessageStart, Message: &msg})
	}
	r.emit(events.Event{Type: events.EvMessageEnd, Message: &msg})
	r.c.Messages = append(r.c.Messages, msg)
	r.added = append(r.added, msg)
	return msg, err
}

func (r *run) stream(ctx context.Context, base events.Message) (events.Message, bool, error) {
	msgs, err := hook.Context(ctx, r.cfg.Hooks, r.c.Messages)
	if err != nil {
		return base, false, err
	}
	r.req = llm.Request{
		Model:         r.cfg.Model,
		SystemPrompt:  r.c.SystemPrompt,
		Messages:      convert(&r.cfg)(msgs),
		Tools:         r.specs,
		ThinkingLevel: r.cfg.ThinkingLevel,
		MaxTokens:     r.cfg.Stream.MaxTokens,
		Temperature:   r.cfg.Stream.Temperature,
		Options:       r.cfg.Stream.Options,
	}
	hook.BeforeProviderRequest(ctx, r.cfg.Hooks, &r.req)
	r.started, r.base = false, base
	msg, err := r.cfg.Provider.Stream(ctx, &r.req, r.onDelta)
	started := r.started
	// A provider that did not classify its failure: the one classifier
	// reads the text, as it reads any provider's.
	if err == nil && msg.StopReason == events.StopError {
		err = &llm.Error{Kind: llm.Classify(0, "", msg.ErrorMessage), Message: msg.ErrorMessage}
	}
	if err != nil && !isLLMError(err) {
		err = &llm.Error{Kind: llm.Classify(0, "", err.Error()), Message: err.Error(), Err: err}
	}
	return msg, started, err
}

// delta reports one streamed fragment, after the message_start of the
// first.
func (r *run) delta(d events.Delta) {
	if !r.started {
		r.started = true
		partial := r.base
		r.emit(events.Event{Type: events.EvMessageStart, Message: &partial})
	}
	r.emit(events.Event{Type: events.EvMessageUpdate, Delta: &d})
}

func isLLMError(err error) bool {
	var e *llm.Error
	return errors.As(err, &e)
}

func stamp(m events.Message) events.Message {
	if m.Timestamp == 0 {
		m.Timestamp = time.Now().UnixMilli()
	}
	return m
}
