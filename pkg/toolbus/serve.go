package toolbus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/jsretry"
	"github.com/cairn-agents/cairn/pkg/provision"
	"github.com/cairn-agents/cairn/pkg/tool"
	"github.com/cairn-agents/cairn/pkg/workpool"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// pullWait is how long one pull request waits for a call; it bounds how long
// a worker takes to stop pulling when it shuts down.
const pullWait = workpool.DefaultPullWait

// Server is a running worker started by [Bus.Start].
type Server struct {
	bus    *Bus
	w      Worker
	log    *slog.Logger
	cons   jetstream.Consumer
	starts jetstream.KeyValue

	pool    *workpool.Pool // the slots; a call's context ends with ErrShutdown at the deadline
	done    chan struct{}  // closed when shutdown is complete
	ready   atomic.Bool
	running atomic.Int64

	mu struct {
		sync.Mutex
		inflight map[events.SessionRef]map[string]context.CancelCauseFunc // session → call id → cancel
		tools    map[string]tool.Tool                                     // by name; SetTools changes it
	}
}

// Serve runs a worker until ctx is done, then shuts it down gracefully (see
// [Bus.Start]); it is [Bus.Start] followed by [Server.Wait].
func (b *Bus) Serve(ctx context.Context, w Worker) error {
	s, err := b.Start(ctx, w)
	if err != nil {
		return err
	}
	return s.Wait()
}

// Start registers w's tools, joins the pool's durable consumer (creating it
// if needed) and starts taking calls; when it returns without error the
// worker is consuming. When ctx is done the worker stops pulling, lets running
// calls finish for up to ShutdownTimeout, then cancels the rest and hands
// their messages back (NAK) for another worker. The streams and buckets must
// exist ([Provision]).
func (b *Bus) Start(ctx context.Context, w Worker) (*Server, error) {
	w, err := w.withDefaults(b.log)
	if err != nil {
		return nil, err
	}
	if err := Check(ctx, b.js, b.names); err != nil {
		return nil, err
	}
	s := &Server{bus: b, w: w, log: w.Logger.With("worker", w.Name, "pool", w.Pool),
		done: make(chan struct{})}
	s.mu.inflight = map[events.SessionRef]map[string]context.CancelCauseFunc{}
	s.mu.tools = map[string]tool.Tool{}
	specs := make([]events.ToolSpec, 0, len(w.Tools))
	for _, t := range w.Tools {
		s.mu.tools[t.Spec().Name] = t
		specs = append(specs, t.Spec())
	}
	if err := b.register(ctx, w.Pool, w.Tenants, specs); err != nil {
		return nil, err
	}
	err = jsretry.Do(ctx, func(ctx context.Context) (err error) {
		s.starts, err = b.js.KeyValue(ctx, b.names.ToolStartsBucket())
		return err
	})
	if err != nil {
		return nil, bucketErr(b.names.ToolStartsBucket(), err)
	}
	cfg := provision.ToolPoolConsumer(b.names, w.Pool, w.AckWait)
	err = jsretry.Do(ctx, func(ctx context.Context) (err error) {
		s.cons, err = b.js.CreateOrUpdateConsumer(ctx, b.names.ToolsStream(), cfg)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("toolbus: consumer %s: %w", b.names.ToolPoolConsumer(w.Pool), err)
	}
	sub, err := b.nc.Subscribe(b.names.AllCancels(), s.onCancel)
	if err != nil {
		return nil, fmt.Errorf("toolbus: subscribe to cancels: %w", err)
	}
	s.pool, err = workpool.Start(ctx, workpool.Config{Consumer: s.cons, Handle: s.handle, Slots: w.Concurrency,
		AckWait: w.AckWait, ShutdownTimeout: w.ShutdownTimeout, PullWait: pullWait, Logger: s.log})
	if err != nil {
		_ = sub.Unsubscribe()
		return nil, fmt.Errorf("toolbus: %w", err)
	}
	s.ready.Store(true)
	s.log.Info("worker started", "concurrency", w.Concurrency, "tools", len(specs))
	go s.shutdownOn(ctx, sub)
	return s, nil
}

// Wait blocks until the worker has shut down.
func (s *Server) Wait() error {
	<-s.done
	return nil
}

// Ready reports whether the worker is taking calls.
func (s *Server) Ready() bool { return s.ready.Load() && s.bus.nc.IsConnected() }

// Running returns the number of calls being executed now.
func (s *Server) Running() int { return int(s.running.Load()) }

// Name returns the worker's name.
func (s *Server) Name() string { return s.w.Name }

func (s *Server) shutdownOn(ctx context.Context, sub *nats.Subscription) {
	defer close(s.done)
	<-ctx.Done()
	s.ready.Store(false)
	s.log.Info("worker stopping", "running", s.running.Load(), "deadline", s.w.ShutdownTimeout)
	s.pool.Wait()
	if err := sub.Unsubscribe(); err != nil && !errors.Is(err, nats.ErrConnectionClosed) {
		s.log.Warn("unsubscribe from cancels", "err", err)
	}
	s.log.Info("worker stopped")
}

// onCancel cancels the running calls named by a message on
// cairn.cancel.<tenant>.<sid>.
func (s *Server) onCancel(m *nats.Msg) {
	sid, ok := events.SessionOf(m.Subject)
	if !ok {
		return
	}
	var req CancelRequest
	if len(m.Data) > 0 {
		if err := json.Unmarshal(m.Data, &req); err != nil {
			s.log.Warn("ignoring cancel request that is not JSON", "session", sid, "err", err)
			return
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	calls := s.mu.inflight[sid]
	if len(req.ToolCallIDs) == 0 {
		for _, cancel := range calls {
			cancel(ErrAborted)
		}
		return
	}
	for _, id := range req.ToolCallIDs {
		if cancel, ok := calls[id]; ok {
			cancel(ErrAborted)
		}
	}
}

func (s *Server) isRunning(sid events.SessionRef, id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.mu.inflight[sid][id]
	return ok
}

func (s *Server) track(sid events.SessionRef, id string, cancel context.CancelCauseFunc) (untrack func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mu.inflight[sid] == nil {
		s.mu.inflight[sid] = map[string]context.CancelCauseFunc{}
	}
	s.mu.inflight[sid][id] = cancel
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		delete(s.mu.inflight[sid], id)
		if len(s.mu.inflight[sid]) == 0 {
			delete(s.mu.inflight, sid)
		}
	}
}
