package harness

import (
	"context"
	"fmt"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/llm"
)

// The system prompt each model call is sent with is in the session (DESIGN
// §13): with Config.SystemPromptFor, the harness records it as an
// events.CustomSystemPrompt entry just before a model call whose request
// carries a prompt other than the last one recorded on the branch — so the
// record is what was sent, after every hook, and it sits between the
// entry the call answers and the reply. The resources are those of the
// prompt the builder made last (at the run's start or its last save
// point); fromHook says a hook (before_agent_start, before_provider_request)
// changed that prompt. A before_agent_start hook's prompt holds for the
// whole run: the save points' rebuilds apply from the next run on.

// SystemPrompt is a system prompt and the resource versions it was built
// from.
type SystemPrompt struct {
	Text      string
	Resources []events.ResourceVersion
}

// recordedPrompt is the text of the last system prompt recorded on path;
// false when none is (or its entry does not decode: it is recorded again).
func recordedPrompt(path []events.Entry) (string, bool) {
	r, ok, err := events.LastSystemPrompt(path)
	if !ok || err != nil {
		return "", false
	}
	return r.Text, true
}

// recording is the provider of a harness that records system prompts: it
// records the request's prompt, when new, then makes the call.
type recording struct {
	h    *Harness
	next llm.Provider
}

func (p recording) Stream(ctx context.Context, req *llm.Request, onDelta func(events.Delta)) (events.Message, error) {
	if err := p.h.recordSystemPrompt(ctx, req.SystemPrompt); err != nil {
		// As a failed message write: the run stops with the error.
		if p.h.run.writeErr == nil {
			p.h.run.writeErr = err
		}
		p.h.run.cancel(err)
		return events.Message{Role: events.RoleAssistant, API: req.Model.API, Provider: req.Model.Provider, Model: req.Model.ID,
			StopReason: events.StopAborted, ErrorMessage: err.Error()}, &llm.Error{Kind: llm.KindAborted, Message: err.Error(), Err: err}
	}
	return p.next.Stream(ctx, req, onDelta)
}

// provider is p, recording the system prompts it is sent when the harness
// builds them.
func (h *Harness) provider(p llm.Provider) llm.Provider {
	if h.cfg.SystemPromptFor == nil || p == nil {
		return p
	}
	return recording{h: h, next: p}
}

// recordSystemPrompt records text, the system prompt of the model call
// about to be made, unless the branch's last record is that one. It runs
// on the run's goroutine, between model calls.
func (h *Harness) recordSystemPrompt(ctx context.Context, text string) error {
	h.mu.Lock()
	same := h.mu.recorded.ok && h.mu.recorded.text == text // a compare, no digest, on every call
	h.mu.Unlock()
	if same {
		return nil
	}
	r := events.SystemPromptRecord{Digest: events.PromptDigest(text), Text: text,
		Resources: h.run.built.Resources, FromHook: text != h.run.built.Text}
	h.wmu.Lock()
	stored, err := h.cfg.Session.Append(context.WithoutCancel(ctx), events.SystemPromptEntry(r))
	h.wmu.Unlock()
	if err != nil {
		return fmt.Errorf("harness: record the system prompt: %w", err)
	}
	h.run.lastLeafID = stored.ID
	h.mu.Lock()
	h.mu.recorded.text, h.mu.recorded.ok = text, true
	h.mu.Unlock()
	return nil
}
