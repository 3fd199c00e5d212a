package telemetry

import (
	"context"

	"github.com/nats-io/nats.go"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
)

// Carrier is a [propagation.TextMapCarrier] over NATS message headers. NATS
// header names are case sensitive and kept as written (unlike HTTP's), so
// Get and Set use the key exactly: the W3C propagator writes and reads
// "traceparent" and "tracestate" in lower case.
type Carrier nats.Header

var _ propagation.TextMapCarrier = Carrier(nil)

// Get returns the first value of key, or "".
func (c Carrier) Get(key string) string {
	if v := c[key]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// Set replaces the values of key.
func (c Carrier) Set(key, value string) { c[key] = []string{value} }

// Keys lists the header names.
func (c Carrier) Keys() []string {
	keys := make([]string, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	return keys
}

// Inject writes the trace context of ctx into h with the global propagator.
// It does nothing when ctx has no span or h is nil.
func Inject(ctx context.Context, h nats.Header) {
	if h == nil {
		return
	}
	otel.GetTextMapPropagator().Inject(ctx, Carrier(h))
}

// Extract returns ctx with the trace context carried by h, if any, as the
// remote parent of the next span started from it.
func Extract(ctx context.Context, h nats.Header) context.Context {
	if h == nil {
		return ctx
	}
	return otel.GetTextMapPropagator().Extract(ctx, Carrier(h))
}
