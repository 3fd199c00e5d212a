package oai

import (
	"context"
	"log/slog"

	"github.com/openai/openai-go/v3/responses"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/llm"
	"github.com/cairn-agents/cairn/pkg/provider/internal/stream"
	"github.com/cairn-agents/cairn/pkg/provider/secret"
)

// APIResponses is the API name of the Responses API.
const APIResponses = "openai-responses"

// Responses streams Responses API calls. Requests are stateless (store
// false): the whole context is sent each time, with the encrypted reasoning
// items of earlier turns kept in thinking signatures.
type Responses struct {
	svc  responses.ResponseService
	key  secret.Secret
	log  *slog.Logger
	name string
}

// NewResponses returns a Responses API provider.
func NewResponses(cfg Config) *Responses {
	return &Responses{svc: responses.NewResponseService(cfg.options()...), key: cfg.APIKey, log: cfg.logger(), name: cfg.Name}
}

// Stream makes one streamed Responses call.
func (r *Responses) Stream(ctx context.Context, req *llm.Request, onDelta func(events.Delta)) (events.Message, error) {
	b := stream.NewBuilder(req.Model, APIResponses, onDelta)
	b.Redact(r.key.Reveal())
	params, opts, lerr := r.params(req)
	if lerr != nil {
		return b.Fail(lerr)
	}
	var fail httpFailure
	opts = append(opts, fail.capture())
	r.log.DebugContext(ctx, "stream start", "api", APIResponses, "model", req.Model.ID, "messages", len(req.Messages), "tools", len(req.Tools))
	s := r.svc.NewStreaming(ctx, params, opts...)
	defer func() { _ = s.Close() }() // closes the response body; the stream's error is s.Err()
	st := respState{b: b, items: map[int64]int{}, texts: map[[2]int64]int{}}
	done := false
	for !done && s.Next() {
		done = st.event(s.Current())
	}
	msg, err := st.msg, st.err
	if !done {
		msg, err = st.broken(ctx, s.Err(), &fail)
	}
	logEnd(ctx, r.log, req.Model.ID, msg, err)
	return msg, err
}
