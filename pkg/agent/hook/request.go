package hook

import (
	"bytes"
	"context"
	"encoding/json"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/llm"
)

// BeforeProviderRequestEvent is emitted with a copy of the request about to
// be sent, as patched by the handlers before.
type BeforeProviderRequestEvent struct {
	Request llm.Request `json:"request"`
}

// RequestPatch changes fields of the request; nil fields are left alone.
// Clear names fields to reset (systemPrompt, thinkingLevel, maxTokens,
// temperature, options); in JSON (remote hooks) a field set to null does
// the same. An Options key whose value is JSON null removes that option.
// Clears apply before sets.
type RequestPatch struct {
	Model         *llm.Model                 `json:"model,omitempty"`
	SystemPrompt  *string                    `json:"systemPrompt,omitempty"`
	ThinkingLevel *string                    `json:"thinkingLevel,omitempty"`
	MaxTokens     *int64                     `json:"maxTokens,omitempty"`
	Temperature   *float64                   `json:"temperature,omitempty"`
	Options       map[string]json.RawMessage `json:"options,omitempty"`
	Clear         []string                   `json:"-"`
}

// clearable are the request fields a patch may reset.
var clearable = []string{"systemPrompt", "thinkingLevel", "maxTokens", "temperature", "options"}

// UnmarshalJSON decodes a patch; a clearable field set to null goes to Clear.
func (p *RequestPatch) UnmarshalJSON(data []byte) error {
	type plain RequestPatch
	var v plain
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return err
	}
	for _, name := range clearable {
		if raw, ok := fields[name]; ok && bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
			v.Clear = append(v.Clear, name)
		}
	}
	*p = RequestPatch(v)
	return nil
}

func (BeforeProviderRequestEvent) Name() string        { return "before_provider_request" }
func (BeforeProviderRequestEvent) result(RequestPatch) {}

// Apply patches req in place.
func (p RequestPatch) Apply(req *llm.Request) {
	for _, name := range p.Clear {
		switch name {
		case "systemPrompt":
			req.SystemPrompt = ""
		case "thinkingLevel":
			req.ThinkingLevel = ""
		case "maxTokens":
			req.MaxTokens = 0
		case "temperature":
			req.Temperature = nil
		case "options":
			req.Options = nil
		}
	}
	if p.Model != nil {
		req.Model = *p.Model
	}
	if p.SystemPrompt != nil {
		req.SystemPrompt = *p.SystemPrompt
	}
	if p.ThinkingLevel != nil {
		req.ThinkingLevel = *p.ThinkingLevel
	}
	if p.MaxTokens != nil {
		req.MaxTokens = *p.MaxTokens
	}
	if p.Temperature != nil {
		t := *p.Temperature
		req.Temperature = &t
	}
	if len(p.Options) > 0 {
		opts := make(map[string]json.RawMessage, len(req.Options)+len(p.Options))
		for k, v := range req.Options {
			opts[k] = v
		}
		for k, v := range p.Options {
			if bytes.Equal(bytes.TrimSpace(v), []byte("null")) {
				delete(opts, k)
			} else {
				opts[k] = v
			}
		}
		req.Options = opts
	}
}

// BeforeProviderRequest applies each handler's patch in turn to req.
// Failing handlers are reported and skipped.
func BeforeProviderRequest(ctx context.Context, r *Registry, req *llm.Request) {
	if !r.Has(BeforeProviderRequestEvent{}.Name()) {
		return
	}
	emit(ctx, r, BeforeProviderRequestEvent{},
		func(ev BeforeProviderRequestEvent) BeforeProviderRequestEvent { ev.Request = *req; return ev },
		func(p RequestPatch) bool { p.Apply(req); return true }, nil)
}

// BeforeAgentStartEvent is emitted when a run starts, with the prompt
// messages and the system prompt as chained so far.
type BeforeAgentStartEvent struct {
	Prompts      []events.Message `json:"prompts"`
	SystemPrompt string           `json:"systemPrompt"`
}

// BeforeAgentStartResult injects messages after the prompts and may replace
// the system prompt for this run.
type BeforeAgentStartResult struct {
	Messages     []events.Message `json:"messages,omitempty"`
	SystemPrompt *string          `json:"systemPrompt,omitempty"`
}

func (BeforeAgentStartEvent) Name() string                  { return "before_agent_start" }
func (BeforeAgentStartEvent) result(BeforeAgentStartResult) {}

// BeforeAgentStart collects every handler's injected messages, in order, and
// chains the system prompt. Failing handlers are reported and skipped.
func BeforeAgentStart(ctx context.Context, r *Registry, prompts []events.Message, system string) (injected []events.Message, systemPrompt string) {
	systemPrompt = system
	emit(ctx, r, BeforeAgentStartEvent{Prompts: prompts},
		func(ev BeforeAgentStartEvent) BeforeAgentStartEvent { ev.SystemPrompt = systemPrompt; return ev },
		func(res BeforeAgentStartResult) bool {
			injected = append(injected, res.Messages...)
			if res.SystemPrompt != nil {
				systemPrompt = *res.SystemPrompt
			}
			return true
		}, nil)
	return injected, systemPrompt
}
