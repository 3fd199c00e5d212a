package extension

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/cairn-agents/cairn/pkg/agent/hook"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
)

// Outcomes of a call, the outcome label of cairn_extension_calls_total.
const (
	OutcomeOK           = "ok"
	OutcomeError        = "error"         // the handler answered with an error
	OutcomeTimeout      = "timeout"       // no answer within the handler's timeout
	OutcomeNoResponders = "no_responders" // nobody serves the handler's subject
	OutcomeBadAnswer    = "bad_answer"    // the answer is not the hook's result
)

// HostConfig configures a [Host]. Zero values mean the defaults given.
type HostConfig struct {
	// Conn is the NATS connection the requests go out on. Required.
	Conn *nats.Conn
	// Names of the bucket and subjects; default prefix "cairn".
	Names events.Names
	// Registerer receives the call metrics; default none.
	Registerer prometheus.Registerer
	// Logger; default discards.
	Logger *slog.Logger
}

// Host is the orchestrator's side of extensions: it watches the
// registrations in the extensions bucket and keeps one remote handler per
// registration in a shared hook registry ([Host.Registry]), which every
// session's registry links (hook.Registry.Link), so a registration takes
// effect from the next emission of every session.
type Host struct {
	cfg     HostConfig
	log     *slog.Logger
	reg     *hook.Registry
	calls   *prometheus.CounterVec
	latency *prometheus.HistogramVec
	inForce prometheus.Gauge
	ready   chan struct{}

	mu struct {
		sync.Mutex
		handlers map[string]registered // by handler name
		changed  chan struct{}         // closed at the next change
	}
}

type registered struct {
	reg events.ExtensionRegistration
	off func()
}

// NewHost builds a host; Run starts watching.
func NewHost(cfg HostConfig) (*Host, error) {
	if cfg.Conn == nil {
		return nil, errors.New("extension: HostConfig.Conn is required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	h := &Host{cfg: cfg, log: cfg.Logger, reg: hook.New(nil), ready: make(chan struct{})}
	h.mu.handlers = map[string]registered{}
	h.mu.changed = make(chan struct{})
	h.calls = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "cairn_extension_calls_total",
		Help: "Hook requests to extension handlers by handler, hook and outcome (ok, error, timeout, no_responders, bad_answer)."},
		[]string{"handler", "hook", "outcome"})
	h.latency = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "cairn_extension_call_seconds",
		Help:    "Time from a hook request to its answer (or failure), by handler and hook.",
		Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}},
		[]string{"handler", "hook"})
	h.inForce = prometheus.NewGauge(prometheus.GaugeOpts{Name: "cairn_extension_handlers",
		Help: "Extension handlers registered and in force in this orchestrator."})
	if cfg.Registerer != nil {
		for _, c := range []prometheus.Collector{h.calls, h.latency, h.inForce} {
			if err := cfg.Registerer.Register(c); err != nil {
				return nil, fmt.Errorf("extension: register metrics: %w", err)
			}
		}
	}
	return h, nil
}

// Registry is the shared registry of the remote handlers.
func (h *Host) Registry() *hook.Registry { return h.reg }

// Ready is closed once the registrations present when Run started are in
// the registry.
func (h *Host) Ready() <-chan struct{} { return h.ready }

// Handlers returns the registrations in force, by handler name.
func (h *Host) Handlers() map[string]events.ExtensionRegistration {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make(map[string]events.ExtensionRegistration, len(h.mu.handlers))
	for k, r := range h.mu.handlers {
		out[k] = r.reg
	}
	return out
}

// Changes returns a channel closed at the next change of the
// registrations in force (a watch entry applied), to wait on with
// [Host.Handlers].
func (h *Host) Changes() <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.mu.changed
}

func (h *Host) changedLocked() {
	h.inForce.Set(float64(len(h.mu.handlers)))
	close(h.mu.changed)
	h.mu.changed = make(chan struct{})
}

// Run watches kv (the extensions bucket) until ctx ends: a put registers
// or replaces a handler, a delete or purge unregisters it. A registration
// that does not validate is logged and ignored (a handler it replaces is
// unregistered). On return every handler is unregistered.
func (h *Host) Run(ctx context.Context, kv jetstream.KeyValue) error {
	w, err := kv.WatchAll(ctx)
	if err != nil {
		return fmt.Errorf("extension: watch %s: %w", kv.Bucket(), err)
	}
	defer func() { _ = w.Stop() }()
	defer h.clear()
	initial := true
	for {
		select {
		case <-ctx.Done():
			return nil
		case e, ok := <-w.Updates():
			if !ok {
				if ctx.Err() != nil {
					return nil
				}
				return fmt.Errorf("extension: the watch of %s ended", kv.Bucket())
			}
			if e == nil {
				if initial {
					initial = false
					close(h.ready)
				}
				continue
			}
			h.apply(e)
		}
	}
}

func (h *Host) apply(e jetstream.KeyValueEntry) {
	key := e.Key()
	h.mu.Lock()
	defer h.mu.Unlock()
	defer h.changedLocked()
	if old, ok := h.mu.handlers[key]; ok {
		old.off()
		delete(h.mu.handlers, key)
		if e.Operation() != jetstream.KeyValuePut {
			h.log.Info("extension handler unregistered", "handler", key)
		}
	}
	if e.Operation() != jetstream.KeyValuePut {
		return
	}
	reg, err := events.DecodeExtensionRegistration(e.Value())
	if err == nil && reg.Handler != key {
		err = fmt.Errorf("handler %q is registered under key %q; the key must be the handler name", reg.Handler, key)
	}
	if err != nil {
		h.log.Warn("extension registration ignored", "key", key, "err", err)
		return
	}
	p := hook.Policy{Timeout: time.Duration(reg.TimeoutMs) * time.Millisecond, FailOpen: reg.Failure == events.FailOpen}
	c := &caller{h: h, reg: reg, subject: h.cfg.Names.ExtensionCallSubject(reg.Handler)}
	p.Observe = c.observe
	off, err := hook.OnRemoteNamed(h.reg, reg.Hook, c, p, hook.Options{Name: reg.Handler, Priority: reg.Priority, Tenant: reg.Tenant})
	if err != nil {
		h.log.Warn("extension registration ignored", "key", key, "err", err)
		return
	}
	h.mu.handlers[key] = registered{reg: reg, off: off}
	h.log.Info("extension handler registered", "handler", reg.Handler, "hook", reg.Hook, "tenant", reg.Tenant,
		"priority", reg.Priority, "timeoutMs", reg.TimeoutMs, "failure", reg.Failure)
}

func (h *Host) clear() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for k, r := range h.mu.handlers {
		r.off()
		delete(h.mu.handlers, k)
	}
	h.changedLocked()
}

// Notify publishes the lifecycle notice kind of session r with details
// (JSON-encoded; nil for none), fire and forget: nobody listening, or a
// failure to publish, costs the session nothing.
func (h *Host) Notify(r events.SessionRef, kind string, details any) {
	n := events.ExtensionNotice{V: events.SchemaVersion, Type: kind, Tenant: r.Tenant, SessionID: r.ID,
		Time: events.FormatTime(time.Now())}
	if details != nil {
		b, err := json.Marshal(details)
		if err == nil {
			n.Details = b
		}
	}
	b, err := json.Marshal(n)
	if err != nil {
		return
	}
	if err := h.cfg.Conn.Publish(h.cfg.Names.ExtensionNoticeSubject(r, kind), b); err != nil {
		h.log.Debug("extension notice not sent", "kind", kind, "err", err)
	}
}

// caller sends one handler's hook events as NATS requests.
type caller struct {
	h       *Host
	reg     events.ExtensionRegistration
	subject string
}

// maxReason bounds the failure reason of a handler's error reply as it is
// reported.
const maxReason = 200

// HandlerError is a handler's own failure: it answered with the error
// header instead of a result.
type HandlerError struct{ Reason string }

func (e *HandlerError) Error() string { return "the handler answered with an error: " + e.Reason }

func (c *caller) Call(ctx context.Context, hookName string, event []byte) ([]byte, error) {
	s := hook.ScopeFrom(ctx)
	body, err := json.Marshal(events.ExtensionRequest{V: events.SchemaVersion, Hook: hookName, Handler: c.reg.Handler,
		Tenant: s.Tenant, SessionID: s.SessionID, Event: event})
	if err != nil {
		return nil, err
	}
	m, err := c.h.cfg.Conn.RequestMsgWithContext(ctx, &nats.Msg{Subject: c.subject, Data: body})
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return nil, fmt.Errorf("no answer within %s: %w", timeoutOf(c.reg), err)
	case err != nil:
		return nil, err
	}
	if reason := m.Header.Get(events.HeaderExtensionError); reason != "" {
		if len(reason) > maxReason {
			reason = reason[:maxReason] + "…"
		}
		return nil, &HandlerError{Reason: strings.ToValidUTF8(reason, "?")}
	}
	return m.Data, nil
}

func timeoutOf(r events.ExtensionRegistration) time.Duration {
	if r.TimeoutMs <= 0 {
		return hook.DefaultTimeout
	}
	return time.Duration(r.TimeoutMs) * time.Millisecond
}

// observe counts the call and logs a failure.
func (c *caller) observe(d time.Duration, err error) {
	outcome := OutcomeOK
	var he *HandlerError
	switch {
	case err == nil:
	case errors.Is(err, context.DeadlineExceeded):
		outcome = OutcomeTimeout
	case errors.Is(err, nats.ErrNoResponders):
		outcome = OutcomeNoResponders
	case errors.Is(err, hook.ErrBadAnswer):
		outcome = OutcomeBadAnswer
	case errors.As(err, &he):
		outcome = OutcomeError
	default:
		outcome = OutcomeError
	}
	c.h.calls.WithLabelValues(c.reg.Handler, c.reg.Hook, outcome).Inc()
	c.h.latency.WithLabelValues(c.reg.Handler, c.reg.Hook).Observe(d.Seconds())
	if err != nil {
		failure := c.reg.Failure
		if failure == "" {
			failure = events.FailClosed
		}
		c.h.log.Warn("extension handler failed", "handler", c.reg.Handler, "hook", c.reg.Hook,
			"outcome", outcome, "failure", failure, "err", err)
	}
}
