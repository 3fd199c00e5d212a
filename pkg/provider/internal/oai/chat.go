package oai

import (
	"context"
	"errors"
	"log/slog"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/llm"
	"github.com/cairn-agents/cairn/pkg/provider/internal/stream"
	"github.com/cairn-agents/cairn/pkg/provider/secret"
)

// APIChat is the API name of Chat Completions.
const APIChat = "openai-completions"

// Chat streams Chat Completions calls.
type Chat struct {
	svc    openai.ChatCompletionService
	key    secret.Secret
	log    *slog.Logger
	name   string
	compat bool
}

// NewChat returns a Chat Completions provider. compat selects the request
// forms every compatible server understands (max_tokens, a system message)
// over OpenAI's newer ones (max_completion_tokens, a developer message for
// reasoning models).
func NewChat(cfg Config, compat bool) *Chat {
	return &Chat{svc: openai.NewChatCompletionService(cfg.options()...), key: cfg.APIKey, log: cfg.logger(), name: cfg.Name, compat: compat}
}

// Stream makes one streamed Chat Completions call.
func (c *Chat) Stream(ctx context.Context, req *llm.Request, onDelta func(events.Delta)) (events.Message, error) {
	b := stream.NewBuilder(req.Model, APIChat, onDelta)
	b.Redact(c.key.Reveal())
	params, opts, lerr := c.params(req)
	if lerr != nil {
		return b.Fail(lerr)
	}
	var fail httpFailure
	opts = append(opts, fail.capture())
	c.log.DebugContext(ctx, "stream start", "api", APIChat, "model", req.Model.ID, "messages", len(req.Messages), "tools", len(req.Tools))
	s := c.svc.NewStreaming(ctx, params, opts...)
	defer func() { _ = s.Close() }() // closes the response body; the stream's error is s.Err()
	st := chatState{b: b, calls: map[int64]int{}}
	for s.Next() {
		st.chunk(s.Current())
	}
	msg, err := st.finish(ctx, s.Err(), &fail)
	logEnd(ctx, c.log, req.Model.ID, msg, err)
	return msg, err
}

func logEnd(ctx context.Context, log *slog.Logger, model string, msg events.Message, err error) {
	if err != nil {
		log.DebugContext(ctx, "stream failed", "model", model, "kind", llm.KindOf(err).String(), "err", err)
		return
	}
	log.DebugContext(ctx, "stream done", "model", model, "stop", msg.StopReason,
		"input", msg.Usage.Input, "output", msg.Usage.Output, "cacheRead", msg.Usage.CacheRead)
}

// classify turns a stream's error into one *llm.Error, preferring what the
// capture middleware saw on the wire.
func classify(ctx context.Context, name string, err error, fail *httpFailure) *llm.Error {
	if ctx.Err() != nil {
		return stream.Aborted(ctx)
	}
	if status, header, body := fail.get(); status != 0 {
		code, msg, _ := errorBody(body)
		return stream.HTTPError(status, code, msg, header, nil)
	}
	var serr *ssestream.StreamError
	if errors.As(err, &serr) {
		return streamError(serr.Event.Data)
	}
	return stream.Transport(ctx, name+" stream", err)
}
