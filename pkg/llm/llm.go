// Package llm is the boundary between Cairn's agent core and language models:
// the [Provider] interface every model backend implements, the request it
// takes, the model description it needs, and the typed errors it returns.
//
// # Streaming
//
// [Provider.Stream] reports deltas (text, thinking, tool-call arguments) to a
// callback as they arrive, on the calling goroutine, in order, and returns the
// final assistant message. Content indexes in deltas match the index of the
// block in the final message.
//
// # Errors
//
// A provider classifies each failure once, as an [*Error] with a [Kind]; the
// loop branches on the kind (errors.Is with [ErrRetryable],
// [ErrContextOverflow], [ErrQuota], ...), never on message text. The rules
// that read an error response's status, code and text live in one place,
// [Classify], which every provider uses. On failure Stream still
// returns the assistant message built so far, with stop reason error (or
// aborted when ctx was cancelled) and the error text in ErrorMessage.
//
// # Cancellation
//
// Cancelling ctx stops the stream promptly; the returned message keeps the
// partial content with stop reason aborted and the error is of kind
// [KindAborted].
package llm

import (
	"context"
	"encoding/json"

	"github.com/cairn-agents/cairn/pkg/events"
)

// Provider streams one model call.
type Provider interface {
	Stream(ctx context.Context, req *Request, onDelta func(events.Delta)) (events.Message, error)
}

// Request is one call to a model. Its JSON (the event of a remote
// before_provider_request hook, docs/extensions.md) uses the camelCase
// names the hook's RequestPatch answers with.
type Request struct {
	Model         Model             `json:"model"`
	SystemPrompt  string            `json:"systemPrompt,omitempty"`
	Messages      []events.Message  `json:"messages"` // user, assistant and toolResult messages
	Tools         []events.ToolSpec `json:"tools,omitempty"`
	ThinkingLevel string            `json:"thinkingLevel,omitempty"` // off | minimal | low | medium | high | xhigh; "" = off
	MaxTokens     int64             `json:"maxTokens,omitempty"`     // 0 = the model's MaxOutput
	Temperature   *float64          `json:"temperature,omitempty"`
	// Options are provider-specific request fields set by hooks
	// (before_provider_request); a provider ignores keys it does not know.
	Options map[string]json.RawMessage `json:"options,omitempty"`
}

// Model describes one model of one provider: its limits and prices.
type Model struct {
	Provider      string `json:"provider"`
	ID            string `json:"id"`
	API           string `json:"api,omitempty"`     // e.g. anthropic-messages, openai-responses
	BaseURL       string `json:"baseUrl,omitempty"` // for openai-compatible servers
	ContextWindow int64  `json:"contextWindow"`
	MaxOutput     int64  `json:"maxOutput"`
	Reasoning     bool   `json:"reasoning,omitempty"`
	Images        bool   `json:"images,omitempty"`
	Price         Price  `json:"price"`
}

// Price is in US dollars per million tokens.
type Price struct {
	Input      float64 `json:"input"`
	Output     float64 `json:"output"`
	CacheRead  float64 `json:"cacheRead"`
	CacheWrite float64 `json:"cacheWrite"`
}

// Ref returns the model's provider/model reference.
func (m Model) Ref() string { return m.Provider + "/" + m.ID }

// Cost fills u.Cost and u.TotalTokens from the model's prices.
func (m Model) Cost(u *events.Usage) {
	const M = 1e6
	u.Cost = events.Cost{
		Input:      float64(u.Input) * m.Price.Input / M,
		Output:     float64(u.Output) * m.Price.Output / M,
		CacheRead:  float64(u.CacheRead) * m.Price.CacheRead / M,
		CacheWrite: float64(u.CacheWrite) * m.Price.CacheWrite / M,
	}
	u.Cost.Total = u.Cost.Input + u.Cost.Output + u.Cost.CacheRead + u.Cost.CacheWrite
	if u.TotalTokens == 0 {
		u.TotalTokens = u.Input + u.Output + u.CacheRead + u.CacheWrite
	}
}
