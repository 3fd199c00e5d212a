package main

import (
	"errors"
	"os"
	"strconv"
	"time"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/provision"
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

SIGTERM or SIGINT: stop taking calls, let running ones finish for
--shutdown-timeout, hand the rest back; a second signal exits at once.`,
		Args: cobra.NoArgs,
	}
	natsURL := addNATSFlag(c)
	f := c.Flags()
	root := f.String("workspace-root", envOr("CAIRN_WORKSPACE_ROOT", ""), "directory every call's workspace must lie in (env CAIRN_WORKSPACE_ROOT; required)")
	pool := f.String("pool", envOr("CAIRN_POOL", "default"), "pool whose calls to take (env CAIRN_POOL)")
	concurrency := f.Int("concurrency", envInt("CAIRN_CONCURRENCY", 4), "calls run at once (env CAIRN_CONCURRENCY)")
	httpAddr := f.String("http", envOr("CAIRN_HTTP", ""), "address for /healthz, /readyz, /metrics (env CAIRN_HTTP; default none)")
	prefix := f.String("prefix", envOr("CAIRN_PREFIX", events.DefaultPrefix), "namespace of streams, subjects and buckets (env CAIRN_PREFIX)")
	shutdown := f.Duration("shutdown-timeout", 30*time.Second, "how long running calls may finish on shutdown")
	ackWait := f.Duration("ack-wait", 30*time.Second, "the pool consumer's AckWait (in-progress acks every third of it)")
	name := f.String("name", "", "worker name in results and logs (default host-pid)")
	checkOnly := f.Bool("check-only", false, "only check that streams and buckets exist; do not create them")
	replicas := f.Int("replicas", 1, "replicas of the streams and buckets it creates")
	c.RunE = func(cmd *cobra.Command, _ []string) error {
		log := newLogger(e, "toolrunner")
		natsOpts, err := natsURL.options(provision.RoleToolrunner, *pool)
		if err != nil {
			return err
		}
		natsOpts = append(natsOpts, nats.ErrorHandler(natsErrorLogger(log)))
		cfg := toolrunner.Config{NATSURL: natsURL.URL, NATSOptions: natsOpts, Prefix: *prefix, WorkspaceRoot: *root, Pool: *pool,
			Concurrency: *concurrency, HTTPAddr: *httpAddr, ShutdownTimeout: *shutdown, AckWait: *ackWait,
			Name: *name, CheckOnly: *checkOnly, Replicas: *replicas, Logger: log}
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
