package telemetry_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/cairn-agents/cairn/internal/natstest"
	"github.com/cairn-agents/cairn/pkg/telemetry"
	"github.com/nats-io/nats.go"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

func TestCarrierCrossesNATSWithItsCase(t *testing.T) {
	otel.SetTextMapPropagator(propagation.TraceContext{})
	tp := sdktrace.NewTracerProvider()
	defer func() { _ = tp.Shutdown(context.Background()) }()
	ctx, span := tp.Tracer("t").Start(context.Background(), "parent")
	defer span.End()

	s := natstest.RunServer(t)
	pub, sub := natstest.Connect(t, s.Server), natstest.Connect(t, s.Server)
	ch := make(chan *nats.Msg, 1)
	if _, err := sub.ChanSubscribe("x", ch); err != nil {
		t.Fatal(err)
	}
	if err := sub.Flush(); err != nil {
		t.Fatal(err)
	}
	msg := nats.NewMsg("x")
	telemetry.Inject(ctx, msg.Header)
	if msg.Header["traceparent"] == nil {
		t.Fatalf("inject wrote %v, want a lower-case traceparent header", msg.Header)
	}
	if err := pub.PublishMsg(msg); err != nil {
		t.Fatal(err)
	}
	var got *nats.Msg
	select {
	case got = <-ch:
	case <-time.After(10 * time.Second):
		t.Fatal("no message")
	}
	rctx := telemetry.Extract(context.Background(), got.Header)
	sc := trace.SpanContextFromContext(rctx)
	if !sc.IsRemote() || sc.TraceID() != span.SpanContext().TraceID() || sc.SpanID() != span.SpanContext().SpanID() {
		t.Fatalf("extracted %v, want the remote parent %v", sc, span.SpanContext())
	}
	// Case matters on NATS: a canonicalised name is a different header.
	h := nats.Header{"Traceparent": got.Header["traceparent"]}
	if trace.SpanContextFromContext(telemetry.Extract(context.Background(), h)).IsValid() {
		t.Fatal("a Traceparent header was read as traceparent")
	}
	if telemetry.Extract(context.Background(), nil) == nil {
		t.Fatal("nil header")
	}
}

func TestLogsRedactCredentialsAndCarryTraceIDs(t *testing.T) {
	var buf bytes.Buffer
	log := telemetry.NewLogger(&buf, nil, "orchestrator")
	tp := sdktrace.NewTracerProvider()
	defer func() { _ = tp.Shutdown(context.Background()) }()
	ctx, span := tp.Tracer("t").Start(context.Background(), "s")
	const key = "sk-ant-fake-0123456789abcdef"
	log.InfoContext(ctx, "calling", "api_key", key, "Authorization", "Bearer "+key, "prompt", telemetry.Redacted("my password is hunter2"),
		slog.Group("provider", "apiKey", key), telemetry.KeySession, "s1", "tokens", 42)
	span.End()
	out := buf.String()
	if strings.Contains(out, key) || strings.Contains(out, "hunter2") {
		t.Fatalf("secret in log line: %s", out)
	}
	var line map[string]any
	if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
		t.Fatal(err)
	}
	if line[telemetry.KeyTrace] != span.SpanContext().TraceID().String() || line[telemetry.KeySpan] != span.SpanContext().SpanID().String() {
		t.Fatalf("trace ids missing: %s", out)
	}
	if line["service"] != "orchestrator" || line["session"] != "s1" || line["tokens"] != float64(42) || line["api_key"] != telemetry.RedactedValue {
		t.Fatalf("unexpected line: %s", out)
	}
	for _, k := range []string{"input_tokens", "tokens", "model", "tool"} {
		if telemetry.SensitiveKey(k) {
			t.Errorf("%q is not a credential", k)
		}
	}
}

func TestSetupOffWithoutEndpointAndRefusesWhatItCannotDo(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
	shutdown, err := telemetry.Setup(context.Background(), telemetry.Config{TraceContent: true})
	if err != nil {
		t.Fatal(err)
	}
	if telemetry.Enabled() || !telemetry.ContentEnabled() {
		t.Fatal("telemetry should be off, the content switch on")
	}
	if _, span := telemetry.Tracer().Start(context.Background(), "x"); span.SpanContext().IsValid() {
		t.Fatal("a span was recorded with telemetry off")
	}
	if err := shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	telemetry.SetContent(false)
	if _, ok := telemetry.ContentAttr(telemetry.AttrPrompt, "x"); ok {
		t.Fatal("content attribute with content off")
	}

	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1")
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json")
	if _, err := telemetry.Setup(context.Background(), telemetry.Config{}); !errors.Is(err, telemetry.ErrConfig) || !strings.Contains(err.Error(), "OTEL_EXPORTER_OTLP_PROTOCOL") {
		t.Fatalf("http/json protocol: got %v", err)
	}
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
	shutdown, err = telemetry.Setup(context.Background(), telemetry.Config{})
	if err != nil {
		t.Fatalf("grpc protocol: %v", err)
	}
	if _, span := telemetry.Tracer().Start(context.Background(), "x"); !span.SpanContext().IsValid() {
		t.Fatal("no span recorded with an OTLP/gRPC endpoint set")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_ = shutdown(ctx) // nothing listens there: the export may fail, the shutdown must return
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "")
	t.Setenv("OTEL_TRACES_EXPORTER", "zipkin")
	if _, err := telemetry.Setup(context.Background(), telemetry.Config{}); !errors.Is(err, telemetry.ErrConfig) {
		t.Fatalf("zipkin exporter: got %v", err)
	}
	t.Setenv("OTEL_TRACES_EXPORTER", "none")
	if telemetry.Enabled() {
		t.Fatal("OTEL_TRACES_EXPORTER=none should turn traces off")
	}
}

func TestLogAttrsFromContext(t *testing.T) {
	var buf bytes.Buffer
	log := telemetry.NewLogger(&buf, nil, "orchestrator").With(telemetry.KeySession, "s1")
	ctx := telemetry.WithLogAttrs(context.Background(), slog.String(telemetry.KeySession, "s1"), slog.Int(telemetry.KeyTurn, 1))
	ctx = telemetry.WithLogAttrs(ctx, slog.Int(telemetry.KeyTurn, 2), slog.String(telemetry.KeyToolCall, "call_1"))
	log.InfoContext(ctx, "x")
	out := buf.String()
	if strings.Count(out, `"session"`) != 1 || !strings.Contains(out, `"turn":2`) || strings.Contains(out, `"turn":1`) || !strings.Contains(out, `"toolCall":"call_1"`) {
		t.Fatalf("want one session, turn 2 and the call id: %s", out)
	}
	buf.Reset()
	log.WithGroup("g").InfoContext(ctx, "y", "k", "v")
	var line map[string]any
	if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
		t.Fatal(err)
	}
	if g, _ := line["g"].(map[string]any); g == nil || g["toolCall"] != "call_1" || line["session"] != "s1" {
		t.Fatalf("grouped logger: %s", buf.String())
	}
}
