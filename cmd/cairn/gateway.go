package main

import (
	"errors"
	"log/slog"
	"net/http"
	"net/http/httputil"
	"net/url"

	"github.com/cairn-agents/cairn/pkg/provision"
	"github.com/cairn-agents/cairn/pkg/session"
	"github.com/cairn-agents/cairn/pkg/telemetry"
	"github.com/cairn-agents/cairn/services/gateway"
	"github.com/spf13/cobra"
)

func newGatewayCmd(e *env) *cobra.Command {
	c := &cobra.Command{
		Use:   "gateway",
		Short: "run the HTTP gateway",
		Args:  cobra.NoArgs,
	}
	natsURL := addNATSFlag(c)
	addr := c.Flags().String("http", "127.0.0.1:8080", "HTTP listen address")
	projector := c.Flags().String("projector", envOr("CAIRN_PROJECTOR", ""), "projector query URL; read queries are proxied there (env CAIRN_PROJECTOR)")
	root := addWorkspaceRootFlag(c, "the toolrunners' --workspace-root: a create with a workspace outside it is refused at once (unset: the orchestrator checks)")
	c.RunE = func(cmd *cobra.Command, _ []string) (err error) {
		wsRoot, err := absRoot(*root)
		if err != nil {
			return err
		}
		var queries http.Handler
		if *projector != "" {
			u, err := url.Parse(*projector)
			if err != nil || u.Scheme == "" || u.Host == "" {
				return usagef("--projector: %q is not an http(s) URL", *projector)
			}
			queries = httputil.NewSingleHostReverseProxy(u)
		}
		log := newLogger(e, "gateway")
		nc, js, err := connectNATS(natsURL, "cairn-gateway", provision.RoleGateway, log)
		if err != nil {
			return err
		}
		defer func() { err = errors.Join(err, nc.Drain()) }()
		// Read-only: the gateway's user may not write the log, so it
		// neither writes snapshots (a forged one would poison cold loads).
		sl, err := session.NewJetStreamLog(cmd.Context(), js, session.WithCreate(false), session.WithSnapshotEvery(0))
		if err != nil {
			return err
		}
		reg := telemetry.NewRegistry()
		g, err := gateway.New(gateway.Config{JetStream: js, Log: sl, Addr: *addr, Queries: queries, WorkspaceRoot: wsRoot, Logger: log,
			Registerer: reg, Gatherer: reg})
		if err != nil {
			return err
		}
		log.Info("gateway listening", "addr", *addr)
		return g.Run(cmd.Context())
	}
	return c
}

// newLogger returns the JSON logger of a service.
func newLogger(e *env, service string) *slog.Logger {
	return telemetry.NewLogger(e.stderr, slog.LevelInfo, service) // JSON, trace ids, credentials redacted
}
