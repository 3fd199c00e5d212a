package toolrunner

import (
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/mcptool"
	"github.com/cairn-agents/cairn/pkg/sandbox"
	"github.com/cairn-agents/cairn/pkg/telemetry"
	"github.com/cairn-agents/cairn/pkg/tool"
	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"
)

// Config configures a [Runner]. The zero value of each field means the
// default given in its comment; flags and CAIRN_* environment variables of
// `cairn toolrunner` fill it.
type Config struct {
	// NATSURL is the server to connect to; default nats://127.0.0.1:4222.
	NATSURL string
	// NATSOptions are more options of the connection: credentials (the
	// service's own NATS user), TLS; default none.
	NATSOptions []nats.Option
	// Prefix namespaces streams, subjects and buckets; default "cairn".
	Prefix string
	// WorkspaceRoot confines every call: a call's workspace must be inside it.
	// Required.
	WorkspaceRoot string
	// ToolsRoot is the directory the built-in tools are rooted at, which
	// every call's resolved workspace must lie in; default WorkspaceRoot.
	// `cairn run` sets it to the current directory, which its workspace
	// root links to as the default tenant's root (DESIGN §7).
	ToolsRoot string
	// Pool is the pool whose calls this runner takes; default "default".
	Pool string
	// Tenants, if set, restricts the pool to these tenants' sessions
	// (toolbus.Worker.Tenants): the orchestrator dispatches no other
	// tenant's call to it and a call that arrives anyway gets an error
	// result. Every runner of a pool should agree. Default: every tenant.
	Tenants []string
	// Concurrency bounds the calls run at once; default 4.
	Concurrency int
	// HTTPAddr serves /healthz, /readyz and /metrics; default none.
	HTTPAddr string
	// ShutdownTimeout is how long running calls may finish on shutdown before
	// they are handed back; default 30s.
	ShutdownTimeout time.Duration
	// AckWait is the pool consumer's AckWait; default 30s.
	AckWait time.Duration
	// Name identifies the runner in results and logs; default host-pid.
	Name string
	// Tools are the tools served; default the built-in tools (pkg/tools:
	// read, write, edit, bash, grep, find, ls) over WorkspaceRoot, each call
	// confined by the sandbox. Tools given here run as they are.
	Tools []tool.Tool
	// MCPOnly serves the MCP servers' tools alone, without the built-in
	// tools: a pool of its own for a team's MCP tools beside the pool that
	// serves the built-ins (a tool name is one pool's). It needs MCP and no
	// Tools.
	MCPOnly bool
	// MCP are MCP servers whose tools the runner serves besides Tools, as
	// mcp__<server>__<tool> (pkg/mcptool); default none. They run outside
	// the sandbox.
	MCP []mcptool.Server
	// Sandbox is how strictly built-in tool calls are confined (pkg/sandbox);
	// default sandbox.Required, which makes Run fail, naming what is missing,
	// where the kernel cannot confine them.
	Sandbox sandbox.Level
	// SandboxPolicy is what a confined call may use (allowed TCP ports,
	// limits); default sandbox.Policy's defaults: no network.
	SandboxPolicy sandbox.Policy
	// CheckOnly makes the runner only check that the streams and buckets exist
	// instead of creating the missing ones; default false (create).
	CheckOnly bool
	// Replicas of what the runner creates; default 1.
	Replicas int
	// Registry receives the runner's metrics and is served on HTTPAddr's
	// /metrics; default telemetry.NewRegistry() (runtime collectors
	// included). `cairn up` passes the registry all its services share.
	Registry *prometheus.Registry
	// Logger; default a text logger on stderr.
	Logger *slog.Logger
}

// Validate reports the first field that is wrong, naming it.
func (c Config) Validate() error {
	if c.WorkspaceRoot == "" {
		return fieldErr("workspaceRoot", "is required (--workspace-root)")
	}
	if fi, err := os.Stat(c.WorkspaceRoot); err != nil || !fi.IsDir() {
		return fieldErr("workspaceRoot", "%q is not an existing directory", c.WorkspaceRoot)
	}
	if c.Prefix != "" {
		if err := events.ValidatePrefix(c.Prefix); err != nil {
			return err
		}
	}
	if c.Pool != "" {
		if err := events.ValidateToolName("pool", c.Pool); err != nil {
			return fieldErr("pool", "%q: 1-64 characters of A-Z a-z 0-9 _ - expected", c.Pool)
		}
	}
	for i, t := range c.Tenants {
		if err := events.ValidateTenant(t); err != nil {
			return fieldErr(fmt.Sprintf("tenants[%d]", i), "%v", err)
		}
	}
	if c.Concurrency < 0 || c.Concurrency > 10000 {
		return fieldErr("concurrency", "must be 1-10000, got %d", c.Concurrency)
	}
	if c.ShutdownTimeout < 0 {
		return fieldErr("shutdownTimeout", "must not be negative, got %s", c.ShutdownTimeout)
	}
	if c.AckWait != 0 && c.AckWait < 100*time.Millisecond {
		return fieldErr("ackWait", "must be at least 100ms, got %s", c.AckWait)
	}
	if c.Replicas < 0 || c.Replicas > 5 {
		return fieldErr("replicas", "must be 1-5, got %d", c.Replicas)
	}
	if c.Sandbox < sandbox.Required || c.Sandbox > sandbox.Off {
		return fieldErr("sandbox", "unknown level %d", int(c.Sandbox))
	}
	if err := c.SandboxPolicy.Validate(); err != nil {
		return fieldErr("sandboxPolicy", "%v", err)
	}
	for i, m := range c.MCP {
		if err := m.Validate(); err != nil {
			return fieldErr(fmt.Sprintf("mcp[%d]", i), "%v", err)
		}
	}
	for i, t := range c.Tools {
		if t == nil {
			return fieldErr(fmt.Sprintf("tools[%d]", i), "is nil")
		}
	}
	if c.MCPOnly && (len(c.MCP) == 0 || len(c.Tools) > 0) {
		return fieldErr("mcpOnly", "needs MCP servers and no Tools (it leaves the built-in tools out)")
	}
	return nil
}

func (c Config) withDefaults() Config {
	if c.NATSURL == "" {
		c.NATSURL = "nats://127.0.0.1:4222"
	}
	if c.Pool == "" {
		c.Pool = "default"
	}
	if c.Concurrency == 0 {
		c.Concurrency = 4
	}
	if c.ShutdownTimeout == 0 {
		c.ShutdownTimeout = 30 * time.Second
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	if c.Registry == nil {
		c.Registry = telemetry.NewRegistry()
	}
	return c
}

func fieldErr(field, format string, args ...any) error {
	return &events.FieldError{Field: field, Problem: fmt.Sprintf(format, args...)}
}
