package telemetry

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"strings"

	"go.opentelemetry.io/otel/trace"
)

// Log keys Cairn's services share, so one query finds a session, turn or
// tool call across every process's logs.
const (
	KeyService  = "service"
	KeySession  = "session"
	KeyTurn     = "turn"
	KeyTool     = "tool"
	KeyToolCall = "toolCall"
	KeyTrace    = "trace_id"
	KeySpan     = "span_id"
	KeyError    = "err"
)

// RedactedValue is what a redacted attribute shows.
const RedactedValue = "[redacted]"

// Redacted is a string that logs as [RedactedValue], for values a log line
// must mention but not show (a credential, a prompt).
type Redacted string

// LogValue implements [slog.LogValuer].
func (Redacted) LogValue() slog.Value { return slog.StringValue(RedactedValue) }

// String keeps fmt from showing the value too.
func (Redacted) String() string { return RedactedValue }

// NewHandler returns a JSON handler writing to w at level (nil = info) that
// adds the trace and span ids of the context's span and the attributes
// [WithLogAttrs] put in the context (log with the *Context methods to get
// them), and redacts attributes whose keys name credentials (api key,
// authorization, password, secret, token) whatever their value.
func NewHandler(w io.Writer, level slog.Leveler) slog.Handler {
	if level == nil {
		level = slog.LevelInfo
	}
	return traceHandler{Handler: slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level, ReplaceAttr: redactAttr})}
}

// NewTextHandler is [NewHandler] writing slog's text format (key=value)
// for people, as `cairn up` does on a terminal: the same trace ids, context
// attributes and redaction.
func NewTextHandler(w io.Writer, level slog.Leveler) slog.Handler {
	if level == nil {
		level = slog.LevelInfo
	}
	return traceHandler{Handler: slog.NewTextHandler(w, &slog.HandlerOptions{Level: level, ReplaceAttr: redactAttr})}
}

type logAttrsKey struct{}

// WithLogAttrs returns ctx carrying attrs (after those ctx already carries)
// for the handler of [NewHandler] to add to every line logged with it: the
// session, turn and tool call ids of the work in progress. A key the logger
// already has (from With) is not repeated.
func WithLogAttrs(ctx context.Context, attrs ...slog.Attr) context.Context {
	prev, _ := ctx.Value(logAttrsKey{}).([]slog.Attr)
	all := make([]slog.Attr, 0, len(prev)+len(attrs))
	for _, a := range prev {
		if !slices.ContainsFunc(attrs, func(b slog.Attr) bool { return b.Key == a.Key }) {
			all = append(all, a)
		}
	}
	return context.WithValue(ctx, logAttrsKey{}, append(all, attrs...))
}

// NewLogger is slog.New(NewHandler(w, level)).With(KeyService, service).
func NewLogger(w io.Writer, level slog.Leveler, service string) *slog.Logger {
	return slog.New(NewHandler(w, level)).With(KeyService, service)
}

func redactAttr(_ []string, a slog.Attr) slog.Attr {
	if a.Value.Kind() != slog.KindGroup && SensitiveKey(a.Key) {
		return slog.String(a.Key, RedactedValue)
	}
	return a
}

// SensitiveKey reports whether an attribute named key holds a credential.
func SensitiveKey(key string) bool {
	k := strings.ToLower(key)
	k = strings.NewReplacer("-", "", "_", "", ".", "").Replace(k)
	for _, s := range []string{"apikey", "authorization", "password", "passwd", "secret", "credential", "bearer", "privatekey"} {
		if strings.Contains(k, s) {
			return true
		}
	}
	return k == "token" || strings.HasSuffix(k, "accesstoken") || strings.HasSuffix(k, "authtoken") || strings.HasSuffix(k, "refreshtoken")
}

// traceHandler adds the span context and the log attributes of the
// record's context.
type traceHandler struct {
	slog.Handler
	keys    []string // top-level keys given to With, not repeated from ctx
	grouped bool     // WithGroup was called: ctx attributes go in the group
}

func (h traceHandler) Handle(ctx context.Context, r slog.Record) error {
	if attrs, _ := ctx.Value(logAttrsKey{}).([]slog.Attr); len(attrs) > 0 {
		for _, a := range attrs {
			if h.grouped || !slices.Contains(h.keys, a.Key) {
				r.AddAttrs(a)
			}
		}
	}
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		r.AddAttrs(slog.String(KeyTrace, sc.TraceID().String()), slog.String(KeySpan, sc.SpanID().String()))
	}
	return h.Handler.Handle(ctx, r)
}

func (h traceHandler) WithAttrs(as []slog.Attr) slog.Handler {
	keys := h.keys
	if !h.grouped {
		keys = slices.Clone(h.keys)
		for _, a := range as {
			keys = append(keys, a.Key)
		}
	}
	return traceHandler{Handler: h.Handler.WithAttrs(as), keys: keys, grouped: h.grouped}
}

func (h traceHandler) WithGroup(name string) slog.Handler {
	return traceHandler{Handler: h.Handler.WithGroup(name), keys: h.keys, grouped: h.grouped || name != ""}
}
