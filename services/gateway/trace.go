package gateway

import (
	"net/http"
	"strings"

	"github.com/cairn-agents/cairn/pkg/telemetry"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// HTTP server span attributes (OpenTelemetry semantic conventions).
const (
	attrMethod = "http.request.method"
	attrRoute  = "http.route"
	attrStatus = "http.response.status_code"
)

// traced runs h under a server span named after the route's pattern
// ("POST /v1/sessions/{id}/commands"), continuing the caller's trace when
// the request carries W3C trace context headers. The commands the request
// stores carry the span on to the orchestrator (see submit). With no
// tracer provider installed the span is a no-op.
func traced(pattern string, h func(*statusWriter, *http.Request)) func(*statusWriter, *http.Request) {
	method, route := splitPattern(pattern)
	return func(w *statusWriter, r *http.Request) {
		ctx := otel.GetTextMapPropagator().Extract(r.Context(), propagation.HeaderCarrier(r.Header))
		ctx, span := telemetry.Tracer().Start(ctx, pattern, trace.WithSpanKind(trace.SpanKindServer),
			trace.WithAttributes(attribute.String(attrMethod, method), attribute.String(attrRoute, route)))
		defer span.End()
		r = r.WithContext(ctx)
		if sid := r.PathValue("id"); sid != "" {
			span.SetAttributes(attribute.String(telemetry.AttrSession, sid))
		}
		h(w, r)
		span.SetAttributes(attribute.Int(attrStatus, w.status))
		if w.status >= 500 {
			span.SetStatus(codes.Error, http.StatusText(w.status))
		}
	}
}

// splitPattern splits "GET /path" into its method and path.
func splitPattern(p string) (method, route string) {
	method, route, ok := strings.Cut(p, " ")
	if !ok {
		return "", p
	}
	return method, route
}
