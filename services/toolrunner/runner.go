package toolrunner

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sync/atomic"
	"time"

	"github.com/cairn-agents/cairn/internal/opshttp"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/mcptool"
	"github.com/cairn-agents/cairn/pkg/sandbox"
	"github.com/cairn-agents/cairn/pkg/tool"
	"github.com/cairn-agents/cairn/pkg/toolbus"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Runner is one toolrunner process's service.
type Runner struct {
	cfg      Config
	metrics  *metrics
	server   atomic.Pointer[toolbus.Server]
	sandbox  atomic.Pointer[sandbox.Sandbox]
	httpAddr atomic.Pointer[string]
	mcp      atomic.Pointer[mcptool.Set]
}

// New checks cfg and returns a Runner; it connects to nothing until Run.
func New(cfg Config) (*Runner, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	// One canonical root for the workspace check and the tools, so a root
	// reached through a symlink does not make every workspace look outside.
	root, err := filepath.Abs(cfg.WorkspaceRoot)
	if err == nil {
		root, err = filepath.EvalSymlinks(root)
	}
	if err != nil {
		return nil, fieldErr("workspaceRoot", "%q: %v", cfg.WorkspaceRoot, err)
	}
	cfg.WorkspaceRoot = root
	r := &Runner{cfg: cfg}
	r.metrics, err = newMetrics(cfg.Registry, func() float64 {
		if s := r.server.Load(); s != nil {
			return float64(s.Running())
		}
		return 0
	}, r.SandboxLevel)
	if err != nil {
		return nil, fmt.Errorf("toolrunner: register metrics: %w", err)
	}
	return r, nil
}

// Ready reports whether the runner is taking calls.
func (r *Runner) Ready() bool {
	s := r.server.Load()
	return s != nil && s.Ready()
}

// SandboxLevel returns the sandbox level in force ("required",
// "best-effort" or "off"), or "" before Run has made the sandbox.
func (r *Runner) SandboxLevel() string {
	if sb := r.sandbox.Load(); sb != nil {
		return sb.Level().String()
	}
	return ""
}

// Readiness is /readyz's answer: ready, and the sandbox level in force with
// what it lacks (best-effort).
func (r *Runner) Readiness() (bool, any) {
	body := r.SandboxFields()
	body["ready"] = r.Ready()
	if m := r.mcp.Load(); m != nil {
		if p := m.Problems(); len(p) > 0 {
			body["mcpProblems"] = p
		}
	}
	if !r.Ready() {
		body["reason"] = "starting"
	}
	return r.Ready(), body
}

// SandboxFields are the sandbox fields of /readyz: "sandbox", the level in
// force, and "sandboxMissing", the layers best-effort goes without. Empty
// before Run has made the sandbox. `cairn up` adds them to the gateway's
// /readyz.
func (r *Runner) SandboxFields() map[string]any {
	body := map[string]any{}
	if sb := r.sandbox.Load(); sb != nil {
		body["sandbox"] = sb.Level().String()
		if m := sb.Missing(); len(m) > 0 && sb.Level() != sandbox.Off {
			body["sandboxMissing"] = m
		}
	}
	return body
}

// HTTPAddr returns the address of the ops endpoints (/healthz, /readyz, /metrics) once it listens, or "".
func (r *Runner) HTTPAddr() string {
	if a := r.httpAddr.Load(); a != nil {
		return *a
	}
	return ""
}

// Run connects to NATS, makes sure the protocol's streams and buckets exist,
// serves the pool until ctx is done and then shuts down gracefully (see the
// package doc). It returns nil after a clean shutdown, also when ctx ends
// while it is still starting.
func (r *Runner) Run(ctx context.Context) error {
	c := r.cfg
	log := c.Logger.With("service", "toolrunner")
	// The sandbox first: at level required a kernel that cannot confine
	// stops the runner before it takes a call.
	sb, err := sandbox.New(c.Sandbox, c.SandboxPolicy, log)
	if err != nil {
		return fmt.Errorf("toolrunner: %w", err)
	}
	defer func() {
		if err := sb.Close(); err != nil {
			log.Warn("toolrunner: remove the sandbox's directories", "err", err)
		}
	}()
	r.sandbox.Store(sb)
	// The proxy's counter (cairn_sandbox_proxy_requests_total), for as
	// long as this sandbox serves.
	if err := r.metrics.reg.Register(sb.Collector()); err != nil {
		return fmt.Errorf("toolrunner: sandbox metrics: %w", err)
	}
	defer r.metrics.reg.Unregister(sb.Collector())
	nc, err := nats.Connect(c.NATSURL, append([]nats.Option{nats.Name("cairn toolrunner " + c.Pool), nats.MaxReconnects(-1),
		nats.ReconnectWait(500 * time.Millisecond)}, c.NATSOptions...)...)
	if err != nil {
		return fmt.Errorf("toolrunner: connect to %s: %w", c.NATSURL, err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	names := events.Names{Prefix: c.Prefix}
	if c.CheckOnly {
		err = toolbus.Check(ctx, js, names)
	} else {
		err = toolbus.Provision(ctx, js, names, toolbus.ProvisionOptions{Replicas: c.Replicas})
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil // asked to stop while starting
		}
		return fmt.Errorf("toolrunner: %w", err)
	}
	bus, err := toolbus.New(nc, names, toolbus.WithLogger(log))
	if err != nil {
		return err
	}
	tl := c.Tools
	if len(tl) == 0 && !c.MCPOnly {
		toolsRoot := c.WorkspaceRoot
		if c.ToolsRoot != "" {
			toolsRoot = c.ToolsRoot
		}
		set, confined, err := sb.Tools(toolsRoot)
		if err != nil {
			return fmt.Errorf("toolrunner: built-in tools: %w", err)
		}
		defer func() {
			if err := set.Close(); err != nil {
				log.Warn("toolrunner: close the workspace", "err", err)
			}
		}()
		tl = confined
	}
	// MCP servers connect before the worker registers its tools, so their
	// tools are there from the start; later changes follow by SetTools.
	var mcps *mcptool.Set
	if len(c.MCP) > 0 {
		mcps, err = mcptool.Start(ctx, c.MCP, log)
		if err != nil {
			return fmt.Errorf("toolrunner: %w", err)
		}
		defer mcps.Close()
		r.mcp.Store(mcps)
		tl = append(slices.Clip(tl), mcps.Tools()...)
	}
	if c.HTTPAddr != "" {
		hs, err := opshttp.Listen(c.HTTPAddr, opshttp.Handler(opshttp.Config{Readiness: r.Readiness, Gatherer: r.metrics.reg}))
		if err != nil {
			return fmt.Errorf("toolrunner: http listen %s: %w", c.HTTPAddr, err)
		}
		addr := hs.Addr()
		r.httpAddr.Store(&addr)
		defer func() {
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := hs.Close(sctx); err != nil {
				log.Warn("http shutdown", "err", err)
			}
		}()
	}
	s, err := bus.Start(ctx, toolbus.Worker{
		Pool: c.Pool, Tenants: c.Tenants, Tools: tl, Concurrency: c.Concurrency, WorkspaceRoot: c.WorkspaceRoot,
		Name: c.Name, AckWait: c.AckWait, ShutdownTimeout: c.ShutdownTimeout, Logger: log,
		Observe: r.metrics.observe,
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil // asked to stop while starting
		}
		return fmt.Errorf("toolrunner: %w", err)
	}
	r.server.Store(s)
	if mcps != nil {
		mcps.Watch(func(tools []tool.Tool) {
			if err := s.SetTools(ctx, mcptool.Prefix, tools); err != nil && ctx.Err() == nil {
				log.Error("toolrunner: register the MCP servers' tools", "err", err)
			}
		})
	}
	r.metrics.queue.watch(js, names.ToolsStream(), names.ToolPoolConsumer(c.Pool), c.Pool)
	log.Info("toolrunner ready", "pool", c.Pool, "concurrency", c.Concurrency, "workspaceRoot", c.WorkspaceRoot, "http", r.HTTPAddr(),
		"sandbox", sb.Level().String())
	err = s.Wait()
	if derr := drain(nc); derr != nil {
		log.Warn("nats drain", "err", derr)
	}
	return err
}

// drain flushes what the connection still has to send and closes it.
func drain(nc *nats.Conn) error {
	closed := make(chan struct{})
	nc.SetClosedHandler(func(*nats.Conn) { close(closed) })
	if err := nc.Drain(); err != nil {
		return err
	}
	select {
	case <-closed:
		return nil
	case <-time.After(10 * time.Second):
		return fmt.Errorf("drain did not finish in 10s")
	}
}
