package agent

import (
	"context"
	"log/slog"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/telemetry"
	"github.com/cairn-agents/cairn/pkg/tool"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// Spans of the loop (see package telemetry): a turn, its model call and its
// tool calls. Content goes into them only when telemetry's content switch
// is on.

func (r *run) startTurn(ctx context.Context) (context.Context, trace.Span) {
	r.turns++
	ctx = telemetry.WithLogAttrs(ctx, slog.String(telemetry.KeySession, r.cfg.SessionID), slog.Int(telemetry.KeyTurn, r.turns))
	return telemetry.Tracer().Start(ctx, telemetry.SpanTurn, trace.WithAttributes(
		attribute.String(telemetry.AttrSession, r.cfg.SessionID), attribute.Int(telemetry.AttrTurn, r.turns)))
}

// endTurn emits turn_end and ends the turn's span.
func (r *run) endTurn(span trace.Span, msg *events.Message, results []events.Message) {
	r.emit(events.Event{Type: events.EvTurnEnd, Message: msg, ToolResults: results})
	span.SetAttributes(attribute.String(telemetry.AttrStopReason, string(msg.StopReason)), attribute.Int("cairn.tool.calls", len(results)))
	spanStatus(span, msg.StopReason == events.StopError, string(msg.StopReason))
	span.End()
}

func (r *run) startLLM(ctx context.Context) (context.Context, trace.Span) {
	m := &r.cfg.Model
	ctx, span := telemetry.Tracer().Start(ctx, telemetry.SpanLLM, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(
		attribute.String(telemetry.AttrSession, r.cfg.SessionID), attribute.String(telemetry.AttrProvider, m.Provider),
		attribute.String(telemetry.AttrModel, m.ID)))
	if span.IsRecording() && telemetry.ContentEnabled() && len(r.c.Messages) > 0 {
		if kv, ok := telemetry.ContentAttr(telemetry.AttrPrompt, r.c.Messages[len(r.c.Messages)-1].Content.Text()); ok {
			span.SetAttributes(kv)
		}
	}
	return ctx, span
}

func endLLM(span trace.Span, msg *events.Message) {
	if !span.IsRecording() {
		span.End()
		return
	}
	span.SetAttributes(attribute.String(telemetry.AttrStopReason, string(msg.StopReason)))
	if u := msg.Usage; u != nil {
		span.SetAttributes(attribute.Int64(telemetry.AttrInputTokens, u.Input), attribute.Int64(telemetry.AttrOutputTokens, u.Output),
			attribute.Int64(telemetry.AttrCacheRead, u.CacheRead), attribute.Int64(telemetry.AttrCacheWrite, u.CacheWrite),
			attribute.Float64(telemetry.AttrCost, u.Cost.Total))
	}
	if telemetry.ContentEnabled() {
		kv, _ := telemetry.ContentAttr(telemetry.AttrCompletion, msg.Content.Text())
		span.SetAttributes(kv)
	}
	failed := msg.StopReason == events.StopError || msg.StopReason == events.StopAborted
	spanStatus(span, failed, string(msg.StopReason))
	span.End()
}

func (r *run) startTool(ctx context.Context, c *call) (context.Context, trace.Span) {
	ctx = telemetry.WithLogAttrs(ctx, slog.String(telemetry.KeyTool, c.block.Name), slog.String(telemetry.KeyToolCall, c.block.ID))
	ctx, span := telemetry.Tracer().Start(ctx, telemetry.SpanTool, trace.WithAttributes(
		attribute.String(telemetry.AttrSession, r.cfg.SessionID), attribute.String(telemetry.AttrTool, c.block.Name),
		attribute.String(telemetry.AttrToolCall, c.block.ID)))
	if span.IsRecording() && telemetry.ContentEnabled() {
		kv, _ := telemetry.ContentAttr(telemetry.AttrToolArgs, string(c.args))
		span.SetAttributes(kv)
	}
	return ctx, span
}

func endTool(span trace.Span, res tool.Result) {
	if span.IsRecording() {
		if telemetry.ContentEnabled() {
			kv, _ := telemetry.ContentAttr(telemetry.AttrToolResult, events.Content{Blocks: res.Content}.Text())
			span.SetAttributes(kv)
		}
		spanStatus(span, res.IsError, "the tool returned an error result")
	}
	span.End()
}

// spanStatus records the outcome; desc never carries content.
func spanStatus(span trace.Span, failed bool, desc string) {
	if failed {
		span.SetAttributes(attribute.String(telemetry.AttrStatus, telemetry.StatusError))
		span.SetStatus(codes.Error, desc)
		return
	}
	span.SetAttributes(attribute.String(telemetry.AttrStatus, telemetry.StatusOK))
}
