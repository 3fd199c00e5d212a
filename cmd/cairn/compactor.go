package main

import (
	"errors"
	"time"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/provision"
	"github.com/cairn-agents/cairn/pkg/telemetry"
	"github.com/cairn-agents/cairn/services/compactor"
	"github.com/nats-io/nats.go"
	"github.com/spf13/cobra"
)

func newCompactorCmd(e *env) *cobra.Command {
	c := &cobra.Command{
		Use:   "compactor",
		Short: "run a compaction worker: write compaction and branch summaries",
		Long: `Run a compaction worker. It takes compaction and branch summary requests
from the CAIRN_COMPACTIONS work queue (any number of compactors share it),
has the request's model write the summary, and stores it in CAIRN_RESULTS
for the session's orchestrator, which appends the entry.

Models come from the same provider registry as the orchestrator's (the
operator's models and endpoints files, and the scripted provider driven by
--script).

SIGTERM or SIGINT: stop taking requests, let running summaries finish for
--shutdown-timeout, hand the rest back; a second signal exits at once.`,
		Args: cobra.NoArgs,
	}
	natsURL := addNATSFlag(c)
	f := c.Flags()
	script := f.String("script", envOr("CAIRN_SCRIPT", ""), "script file of the scripted provider (env CAIRN_SCRIPT)")
	concurrency := f.Int("concurrency", envInt("CAIRN_CONCURRENCY", 4), "summaries written at once (env CAIRN_CONCURRENCY)")
	prefix := f.String("prefix", envOr("CAIRN_PREFIX", events.DefaultPrefix), "namespace of streams and subjects (env CAIRN_PREFIX)")
	shutdown := f.Duration("shutdown-timeout", 30*time.Second, "how long running summaries may finish on shutdown")
	ackWait := f.Duration("ack-wait", 30*time.Second, "the shared consumer's AckWait (in-progress acks every third of it)")
	name := f.String("name", "", "worker name in results and logs (default host-pid)")
	replicas := f.Int("replicas", 1, "replicas of the stream it creates if missing")
	httpAddr := f.String("http", envOr("CAIRN_HTTP", ""), "address for /healthz, /readyz, /metrics (env CAIRN_HTTP; default none)")
	c.RunE = func(cmd *cobra.Command, _ []string) error {
		if *concurrency < 1 {
			return usagef("--concurrency must be at least 1, got %d", *concurrency)
		}
		log := newLogger(e, "compactor")
		natsOpts, err := natsURL.options(provision.RoleCompactor, "")
		if err != nil {
			return err
		}
		natsOpts = append(natsOpts, nats.ErrorHandler(natsErrorLogger(log)))
		models, err := modelsFor(*script, "scripted/demo", log)
		if err != nil {
			return err
		}
		cfg := compactor.Config{NATSURL: natsURL.URL, NATSOptions: natsOpts, Prefix: *prefix, Models: models, Concurrency: *concurrency,
			AckWait: *ackWait, ShutdownTimeout: *shutdown, Name: *name, Replicas: *replicas, HTTPAddr: *httpAddr, Logger: log,
			Registry: telemetry.NewRegistry()}
		if err := cfg.Validate(); err != nil {
			var fe *events.FieldError
			if errors.As(err, &fe) {
				return usagef("%v", err)
			}
			return err
		}
		w, err := compactor.New(cfg)
		if err != nil {
			return err
		}
		return w.Run(cmd.Context())
	}
	return c
}
