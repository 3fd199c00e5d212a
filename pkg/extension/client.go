package extension

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/cairn-agents/cairn/pkg/agent/hook"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/provision"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Extension is the extension process's side: it registers handlers and
// answers their hook requests. Use [New], then [Handle] per handler, and
// Close when done.
type Extension struct {
	nc    *nats.Conn
	names events.Names
	kv    jetstream.KeyValue
	log   *slog.Logger

	ctx    context.Context // cancelled by Close: handlers in flight see it
	cancel context.CancelFunc
	wg     sync.WaitGroup // handlers in flight
	mu     struct {
		sync.Mutex
		subs   map[string]*nats.Subscription // by handler name
		notes  []*nats.Subscription
		closed bool
	}
}

// Option configures [New].
type Option func(*Extension) error

// WithNames sets the names' prefix (default "cairn"); it must match the
// platform's --prefix.
func WithNames(n events.Names) Option {
	return func(x *Extension) error {
		if n.Prefix != "" {
			if err := events.ValidatePrefix(n.Prefix); err != nil {
				return err
			}
		}
		x.names = n
		return nil
	}
}

// WithLogger logs the requests a handler fails to answer; default discards.
func WithLogger(l *slog.Logger) Option {
	return func(x *Extension) error {
		if l == nil {
			return errors.New("extension: WithLogger: nil logger")
		}
		x.log = l
		return nil
	}
}

// New opens the extensions bucket over nc (creating it when it is missing,
// as `cairn provision` would). nc should connect as the extension NATS
// user.
func New(ctx context.Context, nc *nats.Conn, opts ...Option) (*Extension, error) {
	x := &Extension{nc: nc, log: slog.New(slog.DiscardHandler)}
	for _, o := range opts {
		if err := o(x); err != nil {
			return nil, err
		}
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("extension: %w", err)
	}
	x.kv, err = OpenBucket(ctx, js, x.names)
	if err != nil {
		return nil, err
	}
	x.ctx, x.cancel = context.WithCancel(context.Background())
	x.mu.subs = map[string]*nats.Subscription{}
	return x, nil
}

// Handler is a registration without its hook, which [Handle] takes from
// the event type.
type Handler struct {
	// Name names the handler (1-64 of [A-Za-z0-9_-]), unique on the
	// platform: registering a name again replaces the registration.
	Name string
	// Tenant limits the handler to one tenant's sessions; empty = all.
	Tenant string
	// Priority: lower runs first (in-process handlers have 0).
	Priority int
	// Timeout of one call; 0 = 2s, at most 1 minute.
	Timeout time.Duration
	// FailOpen: a failure or time-out counts as no opinion. The default
	// is fail closed (for tool_call: the call is blocked).
	FailOpen bool
}

func (h Handler) registration(hookName string) events.ExtensionRegistration {
	r := events.ExtensionRegistration{Handler: h.Name, Hook: hookName, Tenant: h.Tenant, Priority: h.Priority,
		TimeoutMs: h.Timeout.Milliseconds(), Failure: events.FailClosed}
	if h.Timeout > 0 && r.TimeoutMs == 0 {
		r.TimeoutMs = 1
	}
	if h.FailOpen {
		r.Failure = events.FailOpen
	}
	return r
}

// Call is one hook event as a handler receives it.
type Call[E any] struct {
	Handler   string
	Tenant    string
	SessionID string
	Event     E
}

// Handle serves the hook of event type E as handler h with fn and then
// registers it: from the moment Handle returns, orchestrators call fn for
// every matching event (each within moments, as its watch delivers the
// registration). fn runs in a goroutine of its own per request; its ctx
// ends when the extension closes. An error from fn (or a panic) is
// answered as the handler's failure, which the platform handles by the
// handler's policy.
func Handle[E hook.Event[R], R any](ctx context.Context, x *Extension, h Handler, fn func(context.Context, Call[E]) (R, error)) error {
	var zero E
	return x.serve(ctx, zero.Name(), h, func(ctx context.Context, req events.ExtensionRequest) (any, error) {
		var ev E
		if err := json.Unmarshal(req.Event, &ev); err != nil {
			return nil, fmt.Errorf("the %s event does not decode: %v", req.Hook, err)
		}
		return fn(ctx, Call[E]{Handler: req.Handler, Tenant: req.Tenant, SessionID: req.SessionID, Event: ev})
	})
}

// HandleJSON is [Handle] for the hook called hookName with the event as
// raw JSON and any JSON-encodable answer: for fields of a result the typed
// API does not have yet. The answer must still decode as the hook's result.
func HandleJSON(ctx context.Context, x *Extension, hookName string, h Handler, fn func(context.Context, Call[json.RawMessage]) (any, error)) error {
	if !slices.Contains(hook.RemoteHooks(), hookName) {
		return fmt.Errorf("extension: handler %q: %w %q; one of %v expected", h.Name, hook.ErrUnknownHook, hookName, hook.RemoteHooks())
	}
	return x.serve(ctx, hookName, h, func(ctx context.Context, req events.ExtensionRequest) (any, error) {
		return fn(ctx, Call[json.RawMessage]{Handler: req.Handler, Tenant: req.Tenant, SessionID: req.SessionID, Event: req.Event})
	})
}

func (x *Extension) serve(ctx context.Context, hookName string, h Handler, fn func(context.Context, events.ExtensionRequest) (any, error)) error {
	reg := h.registration(hookName)
	if err := reg.Validate(); err != nil {
		return fmt.Errorf("extension: handler %q: %w", h.Name, err)
	}
	body, err := json.Marshal(reg)
	if err != nil {
		return err
	}
	x.mu.Lock()
	if x.mu.closed {
		x.mu.Unlock()
		return errors.New("extension: closed")
	}
	if _, dup := x.mu.subs[h.Name]; dup {
		x.mu.Unlock()
		return fmt.Errorf("extension: handler %q is served already", h.Name)
	}
	// Replicas of one extension share the requests (a queue group).
	sub, err := x.nc.QueueSubscribe(x.names.ExtensionCallSubject(h.Name), "cairn-ext-"+h.Name, func(m *nats.Msg) {
		x.mu.Lock()
		if x.mu.closed {
			x.mu.Unlock()
			return // closing: the request times out, the platform applies the policy
		}
		x.wg.Add(1)
		x.mu.Unlock()
		go func() {
			defer x.wg.Done()
			x.answer(m, fn)
		}()
	})
	if err == nil {
		x.mu.subs[h.Name] = sub
	}
	x.mu.Unlock()
	if err != nil {
		return fmt.Errorf("extension: serve %q: %w", h.Name, err)
	}
	if err := x.nc.FlushTimeout(flushTimeout); err != nil {
		return fmt.Errorf("extension: serve %q: %w", h.Name, err)
	}
	if _, err := x.kv.Put(ctx, h.Name, body); err != nil {
		return fmt.Errorf("extension: register %q: %w", h.Name, err)
	}
	return nil
}

// flushTimeout bounds the wait for the server to have a new subscription.
const flushTimeout = 10 * time.Second

// answer decodes a request, runs fn and replies with its result or, on an
// error or panic, the error header.
func (x *Extension) answer(m *nats.Msg, fn func(context.Context, events.ExtensionRequest) (any, error)) {
	var req events.ExtensionRequest
	res, err := func() (res any, err error) {
		defer func() {
			if p := recover(); p != nil {
				err = fmt.Errorf("handler panicked: %v", p)
			}
		}()
		if err := json.Unmarshal(m.Data, &req); err != nil {
			return nil, fmt.Errorf("the request does not decode: %v", err)
		}
		return fn(x.ctx, req)
	}()
	reply := nats.NewMsg(m.Reply)
	if err == nil {
		reply.Data, err = json.Marshal(res)
	}
	if err != nil {
		x.log.Warn("extension handler failed", "handler", req.Handler, "hook", req.Hook, "tenant", req.Tenant,
			"session", req.SessionID, "err", err)
		reply.Data = nil
		reply.Header.Set(events.HeaderExtensionError, err.Error())
	}
	if err := m.RespondMsg(reply); err != nil {
		x.log.Warn("extension reply not sent", "handler", req.Handler, "err", err)
	}
}

// Unregister removes handler name's registration (orchestrators stop
// calling it within moments) and stops serving it.
func (x *Extension) Unregister(ctx context.Context, name string) error {
	if err := x.kv.Delete(ctx, name); err != nil {
		return fmt.Errorf("extension: unregister %q: %w", name, err)
	}
	x.mu.Lock()
	sub := x.mu.subs[name]
	delete(x.mu.subs, name)
	x.mu.Unlock()
	if sub != nil {
		return sub.Unsubscribe()
	}
	return nil
}

// Notices calls fn with every lifecycle notice of tenant's sessions
// (every tenant's when tenant is empty), one at a time.
func (x *Extension) Notices(tenant string, fn func(events.ExtensionNotice)) error {
	subject := x.names.AllExtensionNotices()
	if tenant != "" {
		if err := events.ValidateTenant(tenant); err != nil {
			return err
		}
		subject = x.names.TenantExtensionNotices(tenant)
	}
	sub, err := x.nc.Subscribe(subject, func(m *nats.Msg) {
		var n events.ExtensionNotice
		if err := json.Unmarshal(m.Data, &n); err != nil {
			x.log.Warn("extension notice does not decode", "subject", m.Subject, "err", err)
			return
		}
		fn(n)
	})
	if err != nil {
		return fmt.Errorf("extension: notices: %w", err)
	}
	x.mu.Lock()
	x.mu.notes = append(x.mu.notes, sub)
	x.mu.Unlock()
	return x.nc.Flush()
}

// Close unregisters every handler this extension registered, stops
// serving, cancels the ctx of handlers in flight and waits for them.
// A crashed extension's registrations stay: the platform then handles
// every call by the handler's policy (docs/extensions.md).
func (x *Extension) Close(ctx context.Context) error {
	x.mu.Lock()
	if x.mu.closed {
		x.mu.Unlock()
		return nil
	}
	x.mu.closed = true
	names := make([]string, 0, len(x.mu.subs))
	for n := range x.mu.subs {
		names = append(names, n)
	}
	notes := x.mu.notes
	x.mu.Unlock()
	slices.Sort(names)
	var errs []error
	for _, n := range names {
		errs = append(errs, x.Unregister(ctx, n))
	}
	for _, s := range notes {
		errs = append(errs, s.Unsubscribe())
	}
	x.cancel()
	x.wg.Wait()
	return errors.Join(errs...)
}

// OpenBucket opens the extensions bucket under n, creating it as
// pkg/provision configures it when it is missing.
func OpenBucket(ctx context.Context, js jetstream.JetStream, n events.Names) (jetstream.KeyValue, error) {
	kv, err := js.KeyValue(ctx, n.ExtensionsBucket())
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		kv, err = js.CreateKeyValue(ctx, provision.ExtensionsBucket(n, 1))
		if errors.Is(err, jetstream.ErrBucketExists) {
			kv, err = js.KeyValue(ctx, n.ExtensionsBucket())
		}
	}
	if err != nil {
		return nil, fmt.Errorf("extension: bucket %s: %w", n.ExtensionsBucket(), err)
	}
	return kv, nil
}
