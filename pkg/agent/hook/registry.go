package hook

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/cairn-agents/cairn/pkg/events"
)

// Event is a hook event whose handlers return R. The unexported marker method
// ties each event type to exactly one result type.
type Event[R any] interface {
	// Name is the hook's name as reported in hook_error events.
	Name() string
	result(R)
}

// Registry holds the handlers of every hook event. The zero value is not
// usable; use [New]. A nil *Registry has no handlers.
type Registry struct {
	mu struct {
		sync.Mutex
		handlers map[string][]*handler // copy on write, kept sorted: emissions read a snapshot
		report   func(events.Event)
		scope    Scope
		shared   *Registry // handlers of every registry linked to it (Link)
	}
}

type handler struct {
	fn      any // func(context.Context, E) (R, error)
	opts    Options
	seq     uint64 // registration order, the last tie-breaker
	removed atomic.Bool
}

// Options place a handler among the others of its event.
type Options struct {
	// Priority orders the handlers of one event: lower values run first;
	// default 0.
	Priority int
	// Name orders handlers of equal priority (then registration order);
	// remote handlers carry their registered name, in-process ones may
	// leave it empty.
	Name string
	// Tenant, when set, limits the handler to registries whose [Scope] is
	// that tenant's; empty means every tenant.
	Tenant string
}

// Scope names the session a registry serves. Handlers see it through
// [ScopeFrom]; a handler registered for one tenant runs only in registries
// scoped to that tenant.
type Scope struct {
	Tenant    string `json:"tenant,omitempty"`
	SessionID string `json:"sessionId,omitempty"`
}

type scopeKey struct{}

// ScopeFrom returns the scope of the registry whose emission ctx belongs
// to (the zero Scope outside an emission or for an unscoped registry).
func ScopeFrom(ctx context.Context) Scope {
	s, _ := ctx.Value(scopeKey{}).(Scope)
	return s
}

// ErrFailedOpen marks a handler's error as one to report and otherwise
// ignore: the emission goes on as if the handler had no opinion, whatever
// the event's own failure rule (a fail-open remote handler returns it).
var ErrFailedOpen = errors.New("failed open: ignored")

var handlerSeq atomic.Uint64

// New returns an empty registry. report receives hook_error events; nil
// drops them.
func New(report func(events.Event)) *Registry {
	r := &Registry{}
	r.mu.handlers = make(map[string][]*handler)
	r.mu.report = report
	return r
}

// SetScope names the session r serves (see [Scope]).
func (r *Registry) SetScope(s Scope) {
	r.mu.Lock()
	r.mu.scope = s
	r.mu.Unlock()
}

// Link makes the handlers of shared part of r's emissions, merged with r's
// own in [Options] order and filtered by r's scope: one shared registry
// (say, the remote handlers of an orchestrator) serves many per-session
// registries, and a handler registered on it or removed from it counts
// from the next emission of each. Hook errors of shared handlers go to r's
// reporter. nil unlinks.
func (r *Registry) Link(shared *Registry) {
	r.mu.Lock()
	r.mu.shared = shared
	r.mu.Unlock()
}

// SetReporter replaces the function that receives hook_error events.
func (r *Registry) SetReporter(report func(events.Event)) {
	r.mu.Lock()
	r.mu.report = report
	r.mu.Unlock()
}

// On registers fn for events of type E and returns a function that
// unregisters it (safe to call more than once, and during an emission).
func On[E Event[R], R any](r *Registry, fn func(context.Context, E) (R, error)) (off func()) {
	return OnWith(r, Options{}, fn)
}

// OnWith registers fn for events of type E placed by o (see [Options]),
// like [On].
func OnWith[E Event[R], R any](r *Registry, o Options, fn func(context.Context, E) (R, error)) (off func()) {
	var zero E
	name := zero.Name()
	h := &handler{fn: fn, opts: o, seq: handlerSeq.Add(1)}
	r.mu.Lock()
	list := r.mu.handlers[name]
	next := make([]*handler, len(list), len(list)+1)
	copy(next, list)
	next = append(next, h)
	slices.SortStableFunc(next, byOrder)
	r.mu.handlers[name] = next
	r.mu.Unlock()
	return func() {
		if h.removed.Swap(true) {
			return
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		list := r.mu.handlers[name]
		next := make([]*handler, 0, len(list))
		for _, x := range list {
			if x != h {
				next = append(next, x)
			}
		}
		r.mu.handlers[name] = next
	}
}

// byOrder orders handlers by priority, then name, then registration.
func byOrder(a, b *handler) int {
	return cmp.Or(cmp.Compare(a.opts.Priority, b.opts.Priority), cmp.Compare(a.opts.Name, b.opts.Name), cmp.Compare(a.seq, b.seq))
}

// Has reports whether any handler that would run in r (its own, and the
// linked registry's for r's tenant) is registered for the hook called name.
func (r *Registry) Has(name string) bool {
	list, _, _ := r.snapshot(name)
	return len(list) > 0
}

// snapshot returns the handlers of name an emission on r calls, in order,
// with r's reporter and scope.
func (r *Registry) snapshot(name string) ([]*handler, func(events.Event), Scope) {
	if r == nil {
		return nil, nil, Scope{}
	}
	r.mu.Lock()
	own, report, scope, shared := r.mu.handlers[name], r.mu.report, r.mu.scope, r.mu.shared
	r.mu.Unlock()
	list := own
	if shared != nil && shared != r {
		shared.mu.Lock()
		more := shared.mu.handlers[name]
		shared.mu.Unlock()
		if len(more) > 0 {
			list = make([]*handler, 0, len(own)+len(more))
			list = append(list, own...)
			list = append(list, more...)
			slices.SortStableFunc(list, byOrder)
		}
	}
	if !slices.ContainsFunc(list, func(h *handler) bool { return h.opts.Tenant != "" && h.opts.Tenant != scope.Tenant }) {
		return list, report, scope
	}
	kept := make([]*handler, 0, len(list))
	for _, h := range list {
		if h.opts.Tenant == "" || h.opts.Tenant == scope.Tenant {
			kept = append(kept, h)
		}
	}
	return kept, report, scope
}

// PanicError is a handler's panic turned into an error.
type PanicError struct {
	Hook  string
	Value any
}

func (e *PanicError) Error() string { return fmt.Sprintf("hook %s panicked: %v", e.Hook, e.Value) }

// emit calls each live handler of ev's event in order with ev (as returned
// by next, which lets chains feed the previous result forward), and hands
// each result to visit; visit returns false to stop. A failing handler is
// reported and handed to fail, which returns false to stop.
func emit[E Event[R], R any](ctx context.Context, r *Registry, ev E, next func(E) E, visit func(R) bool, fail func(error) bool) {
	list, report, scope := r.snapshot(ev.Name())
	if len(list) == 0 {
		return
	}
	if scope != (Scope{}) {
		ctx = context.WithValue(ctx, scopeKey{}, scope)
	}
	for _, h := range list {
		if h.removed.Load() {
			continue
		}
		if next != nil {
			ev = next(ev)
		}
		res, err := call(ctx, h, ev)
		if err != nil {
			if report != nil {
				report(events.Event{Type: events.EvHookError, Hook: ev.Name(), Error: err.Error()})
			}
			if errors.Is(err, ErrFailedOpen) {
				continue // no opinion
			}
			if fail != nil && !fail(err) {
				return
			}
			continue
		}
		if !visit(res) {
			return
		}
	}
}

func call[E Event[R], R any](ctx context.Context, h *handler, ev E) (res R, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = &PanicError{Hook: ev.Name(), Value: p}
		}
	}()
	return h.fn.(func(context.Context, E) (R, error))(ctx, ev)
}
