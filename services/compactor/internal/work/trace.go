package work

import (
	"context"

	"github.com/cairn-agents/cairn/pkg/compactbus"
	"github.com/cairn-agents/cairn/pkg/telemetry"
	"github.com/nats-io/nats.go/jetstream"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// startSummary opens the compactor's span of a request, a child of the
// orchestrator's cairn.compaction span through the message headers.
func (h *Handler) startSummary(ctx context.Context, m jetstream.Msg, req compactbus.Request) (context.Context, trace.Span) {
	ctx = telemetry.Extract(ctx, m.Headers())
	return telemetry.Tracer().Start(ctx, "cairn.compaction.summarize", trace.WithSpanKind(trace.SpanKindConsumer), trace.WithAttributes(
		attribute.String(telemetry.AttrSession, req.SessionID), attribute.String("cairn.compaction.reason", req.Reason),
		attribute.String(telemetry.AttrModel, req.Model), attribute.String(telemetry.AttrWorker, h.Worker)))
}

// endSummary ends it with the outcome; the error text stays out (it may
// quote the transcript).
func endSummary(span trace.Span, res *compactbus.Result) {
	if res.Error != "" {
		span.SetAttributes(attribute.String(telemetry.AttrStatus, telemetry.StatusError))
		span.SetStatus(codes.Error, "summary failed")
	} else if res.Summary.Text != "" {
		span.SetAttributes(attribute.String(telemetry.AttrStatus, telemetry.StatusOK),
			attribute.Int64(telemetry.AttrInputTokens, res.Summary.Usage.Input), attribute.Int64(telemetry.AttrOutputTokens, res.Summary.Usage.Output))
	}
	span.End()
}
