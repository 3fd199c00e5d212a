// Package work handles one compaction request message: the model call, the
// durable result, then the acknowledgement. It runs in a work pool
// (pkg/workpool), which sends the in-progress acknowledgements.
package work

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/cairn-agents/cairn/pkg/compactbus"
	"github.com/cairn-agents/cairn/pkg/compaction"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/llm"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Models resolves a request's model.
type Models interface {
	Resolve(ref string) (llm.Provider, llm.Model, error)
}

// Handler handles request messages.
type Handler struct {
	JS            jetstream.JetStream
	Names         events.Names
	Models        Models
	Worker        string
	MaxDeliveries int
	Log           *slog.Logger
	// Done, if set, is called with each result after it is stored, and how
	// long it took from taking the request.
	Done func(compactbus.Result, time.Duration)
	// Running, if set, counts the summaries being written.
	Running interface {
		Inc()
		Dec()
	}
}

// Handle answers m. A cancelled ctx (the shutdown deadline) hands the
// request back.
func (h *Handler) Handle(ctx context.Context, m jetstream.Msg) {
	start := time.Now()
	req, err := compactbus.DecodeRequest(m.Data())
	if err != nil {
		h.Log.Warn("refusing a malformed compaction request", "subject", m.Subject(), "err", err)
		_ = m.Term()
		return
	}
	log := h.Log.With("session", req.SessionID, "request", req.RequestID)
	delivered := uint64(1)
	if meta, err := m.Metadata(); err == nil {
		delivered = meta.NumDelivered
	}
	res := compactbus.Result{Tenant: req.Tenant, SessionID: req.SessionID, RequestID: req.RequestID, Worker: h.Worker}
	ctx, span := h.startSummary(ctx, m, req)
	defer func() { endSummary(span, &res) }()
	if int(delivered) > h.MaxDeliveries {
		res.Error = fmt.Sprintf("request delivered %d times without an answer; giving up", delivered)
		h.finish(ctx, m, res, log, start)
		return
	}
	p, model, err := h.Models.Resolve(req.Model)
	if err != nil {
		res.Error = fmt.Sprintf("model %s: %v", req.Model, err)
		h.finish(ctx, m, res, log, start)
		return
	}
	log.Info("summary started", "model", req.Model, "reason", req.Reason, "delivery", delivered)
	if h.Running != nil {
		h.Running.Inc()
	}
	s, err := compaction.Summarize(ctx, p, model, req.Job)
	if h.Running != nil {
		h.Running.Dec()
	}
	switch {
	case err == nil:
		res.Summary = s
	case ctx.Err() != nil:
		log.Info("summary stopped by shutdown; handing the request back")
		_ = m.Nak()
		return
	case llm.KindOf(err) == llm.KindRetryable && int(delivered) < h.MaxDeliveries:
		log.Warn("summary call failed; retrying later", "err", err)
		_ = m.NakWithDelay(time.Duration(delivered) * 2 * time.Second)
		return
	default:
		res.Summary.Usage = s.Usage
		res.Error = err.Error()
	}
	h.finish(ctx, m, res, log, start)
}

// finish stores res, then acknowledges m; a result that cannot be stored
// hands the request back.
func (h *Handler) finish(ctx context.Context, m jetstream.Msg, res compactbus.Result, log *slog.Logger, start time.Time) {
	data, err := res.Encode()
	if err != nil {
		log.Error("cannot encode a result", "err", err)
		_ = m.Term()
		return
	}
	out := nats.NewMsg(h.Names.ResultSubject(res.Session()))
	out.Data = data
	out.Header.Set(jetstream.MsgIDHeader, "res-"+res.RequestID)
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if _, err := h.JS.PublishMsg(pctx, out); err != nil {
		log.Warn("cannot store the result; handing the request back", "err", err)
		_ = m.Nak()
		return
	}
	if err := m.DoubleAck(pctx); err != nil {
		log.Warn("acknowledgement lost; the request may be answered again (the owner keeps the first answer)", "err", err)
	}
	if res.Error != "" {
		log.Warn("summary failed", "err", res.Error)
	} else {
		log.Info("summary done", "chars", len(res.Summary.Text), "input", res.Summary.Usage.Input, "output", res.Summary.Usage.Output)
	}
	if h.Done != nil {
		h.Done(res, time.Since(start))
	}
}
