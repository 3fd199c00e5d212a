package harness

import (
	"context"

	"github.com/cairn-agents/cairn/pkg/telemetry"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// startPrompt opens the span of one run (a prompt, or a continuation):
// the root of the turns, model calls, tool calls and appends it causes.
func (h *Harness) startPrompt(ctx context.Context, cont bool) (context.Context, trace.Span) {
	return telemetry.Tracer().Start(ctx, telemetry.SpanPrompt, trace.WithAttributes(
		attribute.String(telemetry.AttrSession, h.cfg.SessionID), attribute.Bool("cairn.continue", cont)))
}

// endPrompt ends it; the error's kind, not its text, goes into the span.
func endPrompt(span trace.Span, err error) {
	if err != nil {
		span.SetAttributes(attribute.String(telemetry.AttrStatus, telemetry.StatusError))
		span.SetStatus(codes.Error, "the run ended with an error")
	} else {
		span.SetAttributes(attribute.String(telemetry.AttrStatus, telemetry.StatusOK))
	}
	span.End()
}
