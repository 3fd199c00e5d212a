package session

import (
	"context"
	"errors"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/telemetry"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// startAppend opens the span of one append (see package telemetry).
func startAppend(ctx context.Context, sid events.SessionRef, e *events.Entry) (context.Context, trace.Span) {
	return telemetry.Tracer().Start(ctx, telemetry.SpanAppend, trace.WithSpanKind(trace.SpanKindProducer), trace.WithAttributes(
		attribute.String(telemetry.AttrSession, sid.ID), attribute.String(telemetry.AttrEntryType, string(e.Type))))
}

// endAppend records the outcome: ok with the stream sequence, conflict, or error.
func endAppend(span trace.Span, rec Record, err error) {
	switch {
	case err == nil:
		span.SetAttributes(attribute.String(telemetry.AttrStatus, telemetry.StatusOK), attribute.Int64(telemetry.AttrEntrySeq, int64(rec.Seq)))
	case errors.Is(err, ErrConflict):
		span.SetAttributes(attribute.String(telemetry.AttrStatus, "conflict"))
		span.SetStatus(codes.Error, "append conflict")
	default:
		span.SetAttributes(attribute.String(telemetry.AttrStatus, telemetry.StatusError))
		span.SetStatus(codes.Error, "append failed")
	}
	span.End()
}
