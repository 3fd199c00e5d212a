package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/cairn-agents/cairn/pkg/telemetry"
	"github.com/spf13/cobra"
)

// tracing owns the process's telemetry: --trace-content on every command,
// the tracer provider set up from OTEL_* before a command runs, flushed
// after it.
type tracing struct {
	content  bool
	shutdown func(context.Context) error
	stderr   *slog.Logger
}

// setupTelemetry adds --trace-content to root and sets telemetry up before
// any subcommand runs (off unless OTEL_EXPORTER_OTLP_ENDPOINT or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set).
func setupTelemetry(root *cobra.Command, e *env) *tracing {
	tr := &tracing{stderr: newLogger(e, "telemetry")}
	root.PersistentFlags().BoolVar(&tr.content, "trace-content", envOr("CAIRN_TRACE_CONTENT", "") == "true",
		"export prompt, completion and tool content in trace spans (env CAIRN_TRACE_CONTENT=true; default off: ids, counts and outcomes only)")
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error {
		shutdown, err := telemetry.Setup(cmd.Context(), telemetry.Config{ServiceName: "cairn-" + cmd.Name(), TraceContent: tr.content, Log: tr.stderr})
		if err != nil {
			return usagef("%v", err)
		}
		tr.shutdown = shutdown
		return nil
	}
	return tr
}

// flush exports the spans still queued, for at most five seconds.
func (tr *tracing) flush() {
	if tr.shutdown == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := tr.shutdown(ctx); err != nil {
		tr.stderr.Warn("telemetry: spans lost at exit", telemetry.KeyError, fmt.Sprint(err))
	}
}
