package openai

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/url"

	"github.com/cairn-agents/cairn/pkg/llm"
	"github.com/cairn-agents/cairn/pkg/provider/internal/oai"
	"github.com/cairn-agents/cairn/pkg/provider/secret"
)

// API names, as llm.Model.API and events.Message.API carry them.
const (
	APIResponses = oai.APIResponses
	APIChat      = oai.APIChat
)

// DefaultBaseURL is OpenAI's API endpoint.
const DefaultBaseURL = "https://api.openai.com/v1/"

// Config configures a provider. APIKey is required.
type Config struct {
	APIKey secret.Secret
	// BaseURL defaults to DefaultBaseURL (env OPENAI_BASE_URL, read by the
	// provider registry, overrides it for gateways and proxies).
	BaseURL string
	// HTTPClient defaults to a client without timeout: ctx bounds each call.
	HTTPClient *http.Client
	// Logger receives debug lines about each call (never content or keys);
	// nil discards.
	Logger *slog.Logger
}

func (c Config) internal() (oai.Config, error) {
	if c.APIKey.IsZero() {
		return oai.Config{}, &llm.Error{Kind: llm.KindAuth, Message: "openai: no API key (set OPENAI_API_KEY)"}
	}
	base := c.BaseURL
	if base == "" {
		base = DefaultBaseURL
	}
	if u, err := url.Parse(base); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return oai.Config{}, fmt.Errorf("openai: base URL %q: want an http or https URL such as %s", base, DefaultBaseURL)
	}
	return oai.Config{APIKey: c.APIKey, BaseURL: base, HTTPClient: c.HTTPClient, Logger: c.Logger, Name: "openai"}, nil
}

// NewChat returns a Chat Completions provider.
func NewChat(cfg Config) (llm.Provider, error) {
	ic, err := cfg.internal()
	if err != nil {
		return nil, err
	}
	return oai.NewChat(ic, false), nil
}

// NewResponses returns a Responses API provider.
func NewResponses(cfg Config) (llm.Provider, error) {
	ic, err := cfg.internal()
	if err != nil {
		return nil, err
	}
	return oai.NewResponses(ic), nil
}
