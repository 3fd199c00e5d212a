package hook

import (
	"context"
	"fmt"
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
		handlers map[string][]*handler // copy on write: emissions read a snapshot
		report   func(events.Event)
	}
}

type handler struct {
	fn      any // func(context.Context, E) (R, error)
	removed atomic.Bool
}

// New returns an empty registry. report receives hook_error events; nil
// drops them.
func New(report func(events.Event)) *Registry {
	r := &Registry{}
	r.mu.handlers = make(map[string][]*handler)
	r.mu.report = report
	return r
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
	var zero E
	name := zero.Name()
	h := &handler{fn: fn}
	r.mu.Lock()
	list := r.mu.handlers[name]
	next := make([]*handler, len(list), len(list)+1)
	copy(next, list)
	r.mu.handlers[name] = append(next, h)
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

// Has reports whether any handler is registered for the hook called name.
func (r *Registry) Has(name string) bool {
	if r == nil {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.mu.handlers[name]) > 0
}

func (r *Registry) snapshot(name string) ([]*handler, func(events.Event)) {
	if r == nil {
		return nil, nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.mu.handlers[name], r.mu.report
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
	list, report := r.snapshot(ev.Name())
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
