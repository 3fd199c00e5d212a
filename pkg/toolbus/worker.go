package toolbus

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/tool"
)

// Worker configures one process serving the tools of a pool. The zero value of
// every field but Pool and Tools means its default.
type Worker struct {
	Pool  string      // required: the pool whose calls this worker takes
	Tools []tool.Tool // required: every worker of a pool serves the same tools
	// Tenants, if set, restricts the pool to the sessions of these tenants:
	// the registry records them, the orchestrator dispatches no other
	// tenant's call to the pool, and a worker answers one that arrives
	// anyway with an error result. Empty: every tenant. Every worker of a
	// pool should agree.
	Tenants []string
	// Concurrency bounds the calls run at once; default 4.
	Concurrency int
	// WorkspaceRoot, if set, confines calls: a call's workspace is a path
	// inside its tenant's directory <root>/<tenant> (absolute, or relative
	// to that directory; default <root>/<tenant>/<session id>),
	// created if missing; anything else gets an error result. If empty, calls
	// run with no workspace (tool.Call.Workspace is "").
	WorkspaceRoot string
	// Name identifies the worker in results and logs; default host-pid.
	Name string
	// AckWait is how long a call's message stays with this worker without an
	// acknowledgement before it is redelivered; the worker sends in-progress
	// acknowledgements every AckWait/3 while a call runs. Default 30s. It is
	// part of the pool's consumer, so every worker of a pool should agree.
	AckWait time.Duration
	// DefaultTimeout bounds a call whose call and spec name no timeout;
	// default 10 minutes.
	DefaultTimeout time.Duration
	// MaxDeliveries: a call delivered more often gets an error result instead
	// of another run (a call that keeps killing workers); default 5.
	MaxDeliveries int
	// ShutdownTimeout is how long running calls may finish after the serving
	// context is done; those still running are cancelled and handed back.
	// Default 30s.
	ShutdownTimeout time.Duration
	// Logger receives one line per refused message and per failure; default
	// the bus's logger.
	Logger *slog.Logger
	// Observe, if set, is called after each result is durably stored (and
	// before the call is acknowledged), from the goroutine that ran the call.
	Observe func(events.ToolResult)
}

func (w Worker) withDefaults(log *slog.Logger) (Worker, error) {
	if err := validatePool(w.Pool); err != nil {
		return w, err
	}
	if len(w.Tools) == 0 {
		return w, fieldErr("tools", "a worker needs at least one tool")
	}
	seen := map[string]bool{}
	for i, t := range w.Tools {
		if t == nil {
			return w, fieldErr(fmt.Sprintf("tools[%d]", i), "is nil")
		}
		s := t.Spec()
		if err := validateSpec(s); err != nil {
			return w, err
		}
		if seen[s.Name] {
			return w, fieldErr(fmt.Sprintf("tools[%d]", i), "tool %q appears twice", s.Name)
		}
		seen[s.Name] = true
	}
	for i, t := range w.Tenants {
		if err := events.ValidateTenant(t); err != nil {
			return w, fieldErr(fmt.Sprintf("tenants[%d]", i), "%v", err)
		}
	}
	if w.Concurrency == 0 {
		w.Concurrency = 4
	}
	if w.Concurrency < 1 || w.Concurrency > 10000 {
		return w, fieldErr("concurrency", "must be 1-10000, got %d", w.Concurrency)
	}
	if w.WorkspaceRoot != "" {
		root, err := filepath.Abs(w.WorkspaceRoot)
		if err != nil {
			return w, fieldErr("workspaceRoot", "%q: %v", w.WorkspaceRoot, err)
		}
		if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
			return w, fieldErr("workspaceRoot", "%q is not an existing directory", w.WorkspaceRoot)
		}
		w.WorkspaceRoot = root
	}
	if w.Name == "" {
		host, _ := os.Hostname()
		w.Name = host + "-" + strconv.Itoa(os.Getpid())
	}
	if w.AckWait == 0 {
		w.AckWait = DefaultAckWait
	}
	if w.AckWait < 100*time.Millisecond {
		return w, fieldErr("ackWait", "must be at least 100ms, got %s", w.AckWait)
	}
	if w.DefaultTimeout == 0 {
		w.DefaultTimeout = 10 * time.Minute
	}
	if w.MaxDeliveries == 0 {
		w.MaxDeliveries = 5
	}
	if w.MaxDeliveries < 1 {
		return w, fieldErr("maxDeliveries", "must be at least 1, got %d", w.MaxDeliveries)
	}
	if w.ShutdownTimeout == 0 {
		w.ShutdownTimeout = 30 * time.Second
	}
	if w.DefaultTimeout < 0 || w.ShutdownTimeout < 0 {
		return w, fieldErr("timeout", "timeouts must not be negative")
	}
	if w.Logger == nil {
		w.Logger = log
	}
	return w, nil
}
