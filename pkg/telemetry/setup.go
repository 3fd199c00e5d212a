package telemetry

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// ErrConfig wraps every invalid OTEL_* setting [Setup] refuses.
var ErrConfig = errors.New("telemetry: invalid configuration")

// Config is what the process says about itself; the exporter's settings come
// from the standard OTEL_* environment variables (endpoint, headers,
// timeout, sampler, resource attributes, service name).
type Config struct {
	// ServiceName names the process in traces unless OTEL_SERVICE_NAME
	// does. Default "cairn".
	ServiceName string
	// TraceContent lets prompt, completion and tool content into spans.
	// Default false.
	TraceContent bool
	// Log receives export errors. Default: errors are dropped.
	Log *slog.Logger
}

// Enabled reports whether the environment asks for traces: an OTLP endpoint
// is named (OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT),
// OTEL_SDK_DISABLED is not "true" and OTEL_TRACES_EXPORTER is not "none".
func Enabled() bool {
	if strings.EqualFold(os.Getenv("OTEL_SDK_DISABLED"), "true") {
		return false
	}
	if strings.EqualFold(os.Getenv("OTEL_TRACES_EXPORTER"), "none") {
		return false
	}
	return os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}

// Setup installs the global propagator (W3C trace context and baggage) and
// the content switch, and, when [Enabled], a tracer provider exporting over
// OTLP (HTTP/protobuf, or gRPC when OTEL_EXPORTER_OTLP_PROTOCOL says so)
// with a batching processor. The returned function flushes and
// stops the provider (bounded by its ctx) and puts the no-op provider back;
// it is safe to call when telemetry is off.
func Setup(ctx context.Context, cfg Config) (shutdown func(context.Context) error, err error) {
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))
	SetContent(cfg.TraceContent)
	none := func(context.Context) error { return nil }
	if !Enabled() {
		return none, nil
	}
	protocol, err := checkEnv()
	if err != nil {
		return none, err
	}
	var exp sdktrace.SpanExporter
	if protocol == "grpc" {
		exp, err = otlptracegrpc.New(ctx)
	} else {
		exp, err = otlptracehttp.New(ctx)
	}
	if err != nil {
		return none, fmt.Errorf("%w: OTLP exporter: %w", ErrConfig, err)
	}
	name := cfg.ServiceName
	if name == "" {
		name = "cairn"
	}
	res, err := resource.New(ctx,
		resource.WithAttributes(attribute.String("service.name", name)),
		resource.WithFromEnv(), // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win
		resource.WithTelemetrySDK(),
	)
	if err != nil {
		return none, fmt.Errorf("%w: resource: %w", ErrConfig, err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	if cfg.Log != nil {
		log := cfg.Log
		otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) { log.Warn("telemetry export failed", KeyError, err) }))
	}
	otel.SetTracerProvider(tp)
	return func(ctx context.Context) error {
		otel.SetTracerProvider(noop.NewTracerProvider())
		return tp.Shutdown(ctx)
	}, nil
}

// checkEnv refuses settings this build cannot honour rather than ignoring
// them, and returns the OTLP protocol: "http/protobuf" (the default) or
// "grpc". Only the OTLP exporter is built in.
func checkEnv() (string, error) {
	if v := os.Getenv("OTEL_TRACES_EXPORTER"); v != "" && v != "otlp" {
		return "", fmt.Errorf("%w: OTEL_TRACES_EXPORTER=%q: this build exports traces with \"otlp\" (or \"none\" to turn them off)", ErrConfig, v)
	}
	for _, k := range []string{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"} {
		switch v := os.Getenv(k); v {
		case "":
			continue
		case "http/protobuf", "grpc":
			return v, nil
		default:
			return "", fmt.Errorf("%w: %s=%q: want \"http/protobuf\" (default) or \"grpc\"", ErrConfig, k, v)
		}
	}
	return "http/protobuf", nil
}
