package main

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/provision"
	"github.com/cairn-agents/cairn/pkg/sandbox"
	"github.com/cairn-agents/cairn/services/toolrunner"
	"github.com/nats-io/nats.go"
	"github.com/spf13/cobra"
)

func newToolrunnerCmd(e *env) *cobra.Command {
	c := &cobra.Command{
		Use:   "toolrunner",
		Short: "run a tool worker: execute a pool's tool calls from NATS",
		Long: `Run a tool worker. It takes calls of its pool from the CAIRN_TOOLS work queue
(any number of toolrunners share a pool), runs them with the built-in tools
confined to --workspace-root, and stores each result in CAIRN_RESULTS.

Every call runs in a sandbox (--sandbox, default required): Landlock, new
user/mount/PID/network namespaces and resource limits, in a child the
toolrunner starts for the call (docs/tools.md, "Sandbox"). required refuses
to start where the kernel lacks a layer, naming it; best-effort confines
with what there is; off runs calls unconfined and says so at every start.

--mcp NAME=COMMAND... or --mcp NAME=URL also serves an MCP server's tools as
mcp__NAME__TOOL (docs/tools.md, "MCP servers"); the server itself runs
outside the sandbox.

SIGTERM or SIGINT: stop taking calls, let running ones finish for
--shutdown-timeout, hand the rest back; a second signal exits at once.`,
		Args: cobra.NoArgs,
	}
	natsURL := addNATSFlag(c)
	f := c.Flags()
	root := f.String("workspace-root", envOr("CAIRN_WORKSPACE_ROOT", ""), "directory every call's workspace must lie in (env CAIRN_WORKSPACE_ROOT; required)")
	pool := f.String("pool", envOr("CAIRN_POOL", "default"), "pool whose calls to take (env CAIRN_POOL)")
	tenants := f.String("tenants", envOr("CAIRN_TENANTS", ""),
		"tenants whose sessions the pool serves, comma-separated; another tenant's call is refused (env CAIRN_TENANTS; default every tenant)")
	concurrency := f.Int("concurrency", envInt("CAIRN_CONCURRENCY", 4), "calls run at once (env CAIRN_CONCURRENCY)")
	httpAddr := f.String("http", envOr("CAIRN_HTTP", ""), "address for /healthz, /readyz, /metrics (env CAIRN_HTTP; default none)")
	prefix := f.String("prefix", envOr("CAIRN_PREFIX", events.DefaultPrefix), "namespace of streams, subjects and buckets (env CAIRN_PREFIX)")
	shutdown := f.Duration("shutdown-timeout", 30*time.Second, "how long running calls may finish on shutdown")
	ackWait := f.Duration("ack-wait", 30*time.Second, "the pool consumer's AckWait (in-progress acks every third of it)")
	name := f.String("name", "", "worker name in results and logs (default host-pid)")
	checkOnly := f.Bool("check-only", false, "only check that streams and buckets exist; do not create them")
	replicas := f.Int("replicas", 1, "replicas of the streams and buckets it creates")
	sandboxLevel := addSandboxFlag(c)
	mcpf := addMCPFlags(c)
	mcpOnly := f.Bool("mcp-only", false, "serve the --mcp servers' tools alone, not the built-in tools: a pool of its own beside the one serving the built-ins")
	allowPorts := f.String("sandbox-allow-ports", envOr("CAIRN_SANDBOX_ALLOW_PORTS", ""),
		"TCP ports tool calls may connect to, comma-separated (env CAIRN_SANDBOX_ALLOW_PORTS; default none: no network)")
	allowHosts := addAllowHostsFlag(c)
	c.RunE = func(cmd *cobra.Command, _ []string) error {
		level, err := sandbox.ParseLevel(*sandboxLevel)
		if err != nil {
			return usagef("--sandbox: %v", err)
		}
		ports, err := parsePorts(*allowPorts)
		if err != nil {
			return usagef("--sandbox-allow-ports: %v", err)
		}
		hosts, err := sandbox.ParseAllowHosts(*allowHosts)
		if err != nil {
			return usagef("--sandbox-allow-hosts: %v", err)
		}
		if len(ports) > 0 && len(hosts) > 0 {
			return usagef("--sandbox-allow-ports and --sandbox-allow-hosts exclude each other: give ports as host:port in --sandbox-allow-hosts")
		}
		mcps, err := mcpf.parse()
		if err != nil {
			return err
		}
		log := newLogger(e, "toolrunner")
		natsOpts, err := natsURL.options(provision.RoleToolrunner, *pool)
		if err != nil {
			return err
		}
		natsOpts = append(natsOpts, nats.ErrorHandler(natsErrorLogger(log)))
		cfg := toolrunner.Config{NATSURL: natsURL.URL, NATSOptions: natsOpts, Prefix: *prefix, WorkspaceRoot: *root, Pool: *pool, Tenants: splitList(*tenants),
			Concurrency: *concurrency, HTTPAddr: *httpAddr, ShutdownTimeout: *shutdown, AckWait: *ackWait,
			Name: *name, CheckOnly: *checkOnly, Replicas: *replicas, Logger: log,
			Sandbox: level, SandboxPolicy: sandbox.Policy{AllowPorts: ports, AllowHosts: hosts}, MCP: mcps, MCPOnly: *mcpOnly}
		if *concurrency < 1 {
			return usagef("--concurrency must be at least 1, got %d", *concurrency)
		}
		if err := cfg.Validate(); err != nil {
			var fe *events.FieldError
			if errors.As(err, &fe) {
				return usagef("%v", err)
			}
			return err
		}
		r, err := toolrunner.New(cfg)
		if err != nil {
			return err
		}
		// main turns the first SIGTERM/SIGINT into the end of cmd.Context()
		// (graceful) and lets a second one end the process at once.
		return r.Run(cmd.Context())
	}
	return c
}

func envInt(key string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(key)); err == nil {
		return v
	}
	return def
}

// addSandboxFlag adds --sandbox (env CAIRN_SANDBOX) to c.
func addSandboxFlag(c *cobra.Command) *string {
	return c.Flags().String("sandbox", envOr("CAIRN_SANDBOX", "required"),
		"confinement of tool calls: required, best-effort or off (env CAIRN_SANDBOX)")
}

// addAllowHostsFlag adds --sandbox-allow-hosts (env CAIRN_SANDBOX_ALLOW_HOSTS) to c.
func addAllowHostsFlag(c *cobra.Command) *string {
	return c.Flags().String("sandbox-allow-hosts", envOr("CAIRN_SANDBOX_ALLOW_HOSTS", ""),
		"host[:port] tool calls may reach through the sandbox's proxy, comma-separated; no port: 80 and 443; no wildcards "+
			"(env CAIRN_SANDBOX_ALLOW_HOSTS; default none: no network; docs/security.md)")
}

// splitList reads a comma-separated list, leaving out empty items.
func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// parsePorts reads a comma-separated list of TCP ports.
func parsePorts(s string) ([]uint16, error) {
	var ports []uint16
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		n, err := strconv.ParseUint(f, 10, 16)
		if err != nil || n == 0 {
			return nil, fmt.Errorf("%q is not a TCP port (1-65535)", f)
		}
		ports = append(ports, uint16(n))
	}
	return ports, nil
}
