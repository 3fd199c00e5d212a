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

// startCompaction opens the span of a compaction (under the prompt's span
// when the run compacts on its own).
func (h *Harness) startCompaction(ctx context.Context, reason string) (context.Context, trace.Span) {
	return telemetry.Tracer().Start(ctx, telemetry.SpanCompact, trace.WithAttributes(
		attribute.String(telemetry.AttrSession, h.cfg.SessionID), attribute.String("cairn.compaction.reason", reason)))
}

// endPrompt ends a run's span.
func endPrompt(span trace.Span, err error) { endSpan(span, err) }

// endSpan ends span with its status; the error's text stays out of it (it
// may quote content).
func endSpan(span trace.Span, err error) {
	if err != nil {
		span.SetAttributes(attribute.String(telemetry.AttrStatus, telemetry.StatusError))
		span.SetStatus(codes.Error, "failed")
	} else {
		span.SetAttributes(attribute.String(telemetry.AttrStatus, telemetry.StatusOK))
	}
	span.End()
}
