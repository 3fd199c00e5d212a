package toolbus

import (
	"context"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/telemetry"
	"github.com/cairn-agents/cairn/pkg/tool"
	"github.com/nats-io/nats.go/jetstream"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// startRun opens the worker's span of a call, a child of the dispatcher's
// span through the trace context in the message headers. The caller ends it.
func startRun(msg jetstream.Msg, call events.ToolCall, worker string, delivered uint64) trace.Span {
	ctx := telemetry.Extract(context.Background(), msg.Headers())
	_, span := telemetry.Tracer().Start(ctx, telemetry.SpanToolRun, trace.WithSpanKind(trace.SpanKindConsumer), trace.WithAttributes(
		attribute.String(telemetry.AttrSession, call.SessionID), attribute.String(telemetry.AttrTool, call.Name),
		attribute.String(telemetry.AttrToolCall, call.ToolCallID), attribute.String(telemetry.AttrWorker, worker),
		attribute.Int64("cairn.delivery", int64(delivered))))
	return span
}

// endRun records the outcome of an execution (the span itself ends with handle).
func endRun(span trace.Span, res tool.Result, handBack bool) {
	switch {
	case handBack:
		span.SetAttributes(attribute.String(telemetry.AttrStatus, "handed_back"))
	case res.IsError:
		span.SetAttributes(attribute.String(telemetry.AttrStatus, telemetry.StatusError))
		span.SetStatus(codes.Error, "the tool returned an error result")
	default:
		span.SetAttributes(attribute.String(telemetry.AttrStatus, telemetry.StatusOK))
	}
	if span.IsRecording() && telemetry.ContentEnabled() {
		kv, _ := telemetry.ContentAttr(telemetry.AttrToolResult, events.Content{Blocks: res.Content}.Text())
		span.SetAttributes(kv)
	}
}
