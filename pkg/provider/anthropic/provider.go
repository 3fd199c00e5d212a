package anthropic

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/llm"
	"github.com/cairn-agents/cairn/pkg/provider/internal/stream"
	"github.com/cairn-agents/cairn/pkg/provider/secret"
)

// API is the value of llm.Model.API and events.Message.API for this provider.
const API = "anthropic-messages"

// DefaultBaseURL is Anthropic's API endpoint.
const DefaultBaseURL = "https://api.anthropic.com/"

// Config configures a Provider. The zero value is not usable: APIKey is
// required.
type Config struct {
	APIKey secret.Secret
	// BaseURL defaults to DefaultBaseURL (env ANTHROPIC_BASE_URL, read by
	// the provider registry, overrides it for gateways and proxies).
	BaseURL string
	// HTTPClient defaults to a client without timeout: ctx bounds each call.
	HTTPClient *http.Client
	// Logger receives debug lines about each call (never content or keys);
	// nil discards.
	Logger *slog.Logger
}

// Provider streams Anthropic Messages calls.
type Provider struct {
	msgs sdk.MessageService
	key  secret.Secret
	log  *slog.Logger
}

// New returns a provider for cfg.
func New(cfg Config) (*Provider, error) {
	if cfg.APIKey.IsZero() {
		return nil, &llm.Error{Kind: llm.KindAuth, Message: "anthropic: no API key (set ANTHROPIC_API_KEY)"}
	}
	base := cfg.BaseURL
	if base == "" {
		base = DefaultBaseURL
	}
	if u, err := url.Parse(base); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("anthropic: base URL %q: want an http or https URL such as %s", base, DefaultBaseURL)
	}
	if !strings.HasSuffix(base, "/") {
		base += "/"
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{}
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Provider{
		msgs: sdk.NewMessageService(
			option.WithBaseURL(base),
			option.WithHTTPClient(hc),
			option.WithAPIKey(cfg.APIKey.Reveal()),
			option.WithMaxRetries(0),
		),
		key: cfg.APIKey,
		log: log.With("provider", "anthropic"),
	}, nil
}

// Stream makes one streamed Messages call; see package llm for the contract.
func (p *Provider) Stream(ctx context.Context, req *llm.Request, onDelta func(events.Delta)) (events.Message, error) {
	b := stream.NewBuilder(req.Model, API, onDelta)
	b.Redact(p.key.Reveal())
	params, opts, lerr := buildParams(req)
	if lerr != nil {
		return b.Fail(lerr)
	}
	p.log.DebugContext(ctx, "stream start", "model", req.Model.ID, "messages", len(req.Messages), "tools", len(req.Tools), "thinking", req.ThinkingLevel)
	s := p.msgs.NewStreaming(ctx, params, opts...)
	defer func() { _ = s.Close() }() // closes the response body; the stream's error is s.Err()
	msg, err := consume(ctx, s, b)
	if err != nil {
		p.log.DebugContext(ctx, "stream failed", "model", req.Model.ID, "kind", llm.KindOf(err).String(), "err", err)
	} else {
		p.log.DebugContext(ctx, "stream done", "model", req.Model.ID, "stop", msg.StopReason,
			"input", msg.Usage.Input, "output", msg.Usage.Output, "cacheRead", msg.Usage.CacheRead, "cacheWrite", msg.Usage.CacheWrite)
	}
	return msg, err
}
