package oai

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/openai/openai-go/v3/option"

	"github.com/cairn-agents/cairn/pkg/llm"
	"github.com/cairn-agents/cairn/pkg/provider/internal/stream"
	"github.com/cairn-agents/cairn/pkg/provider/secret"
)

// Config is shared by both APIs.
type Config struct {
	APIKey     secret.Secret // may be empty for servers without auth
	BaseURL    string        // required
	HTTPClient *http.Client  // nil: a client without timeout (ctx bounds calls)
	Logger     *slog.Logger  // nil discards
	// Name labels log lines and errors (openai, or the endpoint's name).
	Name string
}

func (c Config) options() []option.RequestOption {
	base := c.BaseURL
	if !strings.HasSuffix(base, "/") {
		base += "/"
	}
	hc := c.HTTPClient
	if hc == nil {
		hc = &http.Client{}
	}
	opts := []option.RequestOption{
		option.WithBaseURL(base),
		option.WithHTTPClient(hc),
		option.WithMaxRetries(0),
	}
	if !c.APIKey.IsZero() {
		opts = append(opts, option.WithAPIKey(c.APIKey.Reveal()))
	}
	return opts
}

func (c Config) logger() *slog.Logger {
	if c.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return c.Logger.With("provider", c.Name)
}

// httpFailure is an error response as it came over the wire.
type httpFailure struct {
	mu     sync.Mutex
	status int
	header http.Header
	body   []byte
}

// capture returns a middleware that records error responses into f, leaving
// the body readable for the SDK.
func (f *httpFailure) capture() option.RequestOption {
	return option.WithMiddleware(func(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
		res, err := next(req)
		if err != nil || res.StatusCode < 400 {
			return res, err
		}
		body, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
		_ = res.Body.Close()
		res.Body = io.NopCloser(bytes.NewReader(body))
		f.mu.Lock()
		f.status, f.header, f.body = res.StatusCode, res.Header.Clone(), body
		f.mu.Unlock()
		return res, nil
	})
}

func (f *httpFailure) get() (int, http.Header, []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.status, f.header, f.body
}

// errorBody reads the code and message of an error body in the shapes
// OpenAI and compatible servers use: {"error": {"message", "code", "type"}},
// {"error": "text"}, {"message", "code", "type"} (vLLM), {"detail": "text"},
// or plain text.
func errorBody(body []byte) (code, msg string, status int) {
	body = bytes.TrimSpace(body)
	var top map[string]json.RawMessage
	if json.Unmarshal(body, &top) != nil {
		return "", string(body), 0
	}
	obj := top
	if raw, ok := top["error"]; ok {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return "", s, 0
		}
		var inner map[string]json.RawMessage
		if json.Unmarshal(raw, &inner) == nil {
			obj = inner
		}
	}
	str := func(k string) string {
		var s string
		if json.Unmarshal(obj[k], &s) == nil {
			return s
		}
		return ""
	}
	msg = str("message")
	if msg == "" {
		msg = str("detail")
	}
	if msg == "" {
		var s string
		if json.Unmarshal(top["detail"], &s) == nil {
			msg = s
		}
	}
	code = str("code")
	if code == "" {
		if n, err := strconv.Atoi(string(obj["code"])); err == nil && n >= 400 && n < 600 {
			status = n // vLLM and llama.cpp put the HTTP status in code
		}
		code = str("type")
	}
	if msg == "" {
		msg = string(body)
	}
	return code, msg, status
}

// streamError classifies an error object that arrived inside a 200 stream.
func streamError(data []byte) *llm.Error {
	code, msg, status := errorBody(data)
	if status == 0 {
		status = codeStatus(code)
	}
	return stream.HTTPError(status, code, msg, nil, nil)
}

// codeStatus gives the HTTP status that an in-stream error code stands for;
// unknown codes count as server errors.
func codeStatus(code string) int {
	switch code {
	case "rate_limit_exceeded", "rate_limit_error", "insufficient_quota_temporary":
		return 429
	case "invalid_api_key", "authentication_error", "unauthorized":
		return 401
	case "invalid_request_error", "invalid_prompt", "bad_request":
		return 400
	case "context_length_exceeded":
		return 400
	case "server_is_overloaded", "overloaded", "service_unavailable", "slow_down":
		return 503
	}
	return 500
}
