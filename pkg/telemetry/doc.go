// Package telemetry sets up Cairn's traces, metrics registry and structured
// logs: the OpenTelemetry SDK with the OTLP exporter (HTTP or gRPC),
// configured by the standard OTEL_* environment variables and off when none names an endpoint; a
// [propagation.TextMapCarrier] over [nats.Header] so that a trace follows a
// tool call through NATS; the span and attribute names every part of Cairn
// uses; the switch that lets prompt, completion and tool content into spans;
// and a slog handler that adds trace ids and the session, turn and tool call
// ids the work in progress put into its context ([WithLogAttrs]), and
// redacts credentials.
//
// [NewRegistry] is the one Prometheus registry of a process: the runtime
// collectors, and every service's series registered into it, so that one
// /metrics shows them all (under `cairn up`, every embedded service's).
//
// Instrumented code asks [Tracer] for its tracer. Until [Setup] installs a
// provider (or when telemetry is off) that tracer is OpenTelemetry's no-op
// one, so instrumentation costs a few nanoseconds per span and exports
// nothing.
//
// # Content
//
// Span attributes never carry prompt, completion or tool text unless the
// operator sets [Config.TraceContent] (cairn's --trace-content flag); code
// that wants to attach content asks [ContentEnabled] first, or uses
// [ContentAttr], which does. Credentials are never attributes, whatever the
// switch says.
//
// # Concurrency
//
// Everything here is safe for concurrent use, the registry included. [Setup] installs process-wide
// state (the global tracer provider, propagator and content switch): call it
// once, early, from main.
//
// # Durability
//
// Spans are batched in memory and exported in the background; the shutdown
// function [Setup] returns flushes them. Spans still queued when a process is
// killed are lost, by design: traces are diagnostics, the log is the record.
//
// # Errors
//
// [Setup] fails when the OTEL_* variables are invalid (an unknown exporter or
// protocol, a malformed endpoint); export failures later are logged, never
// returned to instrumented code.
package telemetry
