// Package openaicompat is Cairn's provider for servers that speak OpenAI's
// Chat Completions at a base URL of their own: Ollama, vLLM, OpenRouter,
// llama.cpp's server, LM Studio and gateways. It uses the official OpenAI SDK
// with the request forms all of them accept (max_tokens, a system message)
// and reads their known deviations: reasoning in reasoning_content or
// reasoning, missing usage, tool calls without ids or with whole (even
// object-valued) arguments, several calls at one index, finish reasons under
// other names, and error bodies of every shape.
//
// # Ordering
//
// Deltas are reported in stream order, on the goroutine that called Stream.
//
// # Concurrency
//
// A provider holds no per-call state; concurrent Stream calls are safe.
//
// # Errors
//
// As package openai, plus the overflow wordings of compatible servers
// ("maximum context length is N tokens", "exceeds the available context
// size", "prompt too long"...). A response without usage reports zero
// tokens, so the overflow check on usage cannot fire for it.
package openaicompat

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/url"

	"github.com/cairn-agents/cairn/pkg/llm"
	"github.com/cairn-agents/cairn/pkg/provider/internal/oai"
	"github.com/cairn-agents/cairn/pkg/provider/secret"
)

// API is the API name of compatible endpoints.
const API = oai.APIChat

// Config configures one endpoint.
type Config struct {
	// Name is the provider name of the endpoint's models (ollama in
	// ollama/qwen3:8b); it labels log lines and errors.
	Name string
	// BaseURL is required, e.g. http://localhost:11434/v1.
	BaseURL string
	// APIKey may be empty: local servers often take none.
	APIKey     secret.Secret
	HTTPClient *http.Client // nil: a client without timeout (ctx bounds calls)
	Logger     *slog.Logger // nil discards
}

// New returns a provider for the endpoint.
func New(cfg Config) (llm.Provider, error) {
	if cfg.Name == "" {
		return nil, fmt.Errorf("openaicompat: Name is required")
	}
	u, err := url.Parse(cfg.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("openaicompat %s: base URL %q: want an http or https URL such as http://localhost:11434/v1", cfg.Name, cfg.BaseURL)
	}
	return oai.NewChat(oai.Config{APIKey: cfg.APIKey, BaseURL: cfg.BaseURL, HTTPClient: cfg.HTTPClient, Logger: cfg.Logger, Name: cfg.Name}, true), nil
}
