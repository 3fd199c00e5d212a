package main

import (
	"errors"
	"path/filepath"
	"time"

	"github.com/cairn-agents/cairn/internal/opshttp"
	"github.com/cairn-agents/cairn/pkg/provision"
	"github.com/cairn-agents/cairn/pkg/session"
	"github.com/cairn-agents/cairn/pkg/telemetry"
	"github.com/cairn-agents/cairn/services/orchestrator"
	"github.com/spf13/cobra"
	"golang.org/x/sync/errgroup"
)

func newOrchestratorCmd(e *env) *cobra.Command {
	c := &cobra.Command{Use: "orchestrator", Short: "run the orchestrator service", Args: cobra.NoArgs}
	natsURL := addNATSFlag(c)
	script := c.Flags().String("script", envOr("CAIRN_SCRIPT", ""), "script file of the scripted provider (env CAIRN_SCRIPT)")
	model := c.Flags().String("model", envOr("CAIRN_MODEL", "scripted/demo"), "default model of new sessions (env CAIRN_MODEL)")
	instance := c.Flags().String("instance", "", "this instance's name among orchestrators (default host-pid)")
	addr := c.Flags().String("http", "", "address of /healthz, /readyz and /metrics (default none)")
	leaseTTL := c.Flags().Duration("lease-ttl", 5*time.Second, "how long a dead instance keeps its sessions")
	noExt := addNoExtensionsFlag(c)
	root := addWorkspaceRootFlag(c, "the toolrunners' --workspace-root: a create's workspace must lie inside it (unset: only relative workspaces)")
	c.RunE = func(cmd *cobra.Command, _ []string) (err error) {
		log := newLogger(e, "orchestrator")
		wsRoot, err := absRoot(*root)
		if err != nil {
			return err
		}
		nc, js, err := connectNATS(natsURL, "cairn-orchestrator", provision.RoleOrchestrator, log)
		if err != nil {
			return err
		}
		defer func() { err = errors.Join(err, nc.Drain()) }()
		sl, err := session.NewJetStreamLog(cmd.Context(), js, session.WithCreate(false))
		if err != nil {
			return err
		}
		models, err := modelsFor(*script, *model, log)
		if err != nil {
			return err
		}
		reg := telemetry.NewRegistry()
		o, err := orchestrator.New(orchestrator.Config{Conn: nc, Log: sl, Models: models, DefaultModel: *model,
			Instance: *instance, LeaseTTL: *leaseTTL, WorkspaceRoot: wsRoot, Registerer: reg, Logger: log, NoExtensions: *noExt})
		if err != nil {
			return err
		}
		g, ctx := errgroup.WithContext(cmd.Context())
		g.Go(func() error { return o.Run(ctx) })
		if *addr != "" {
			g.Go(func() error { return opshttp.Serve(ctx, *addr, opshttp.Handler(opshttp.Config{Gatherer: reg})) })
		}
		return g.Wait()
	}
	return c
}

// addNoExtensionsFlag adds --no-extensions (env CAIRN_NO_EXTENSIONS=1).
func addNoExtensionsFlag(c *cobra.Command) *bool {
	return c.Flags().Bool("no-extensions", envOr("CAIRN_NO_EXTENSIONS", "") == "1",
		"call no extension: ignore the handlers registered in the extensions bucket, send no lifecycle notice (env CAIRN_NO_EXTENSIONS=1)")
}

// addWorkspaceRootFlag adds --workspace-root (env CAIRN_WORKSPACE_ROOT),
// the toolrunner's flag, to a service that checks workspaces.
func addWorkspaceRootFlag(c *cobra.Command, usage string) *string {
	return c.Flags().String("workspace-root", envOr("CAIRN_WORKSPACE_ROOT", ""), usage+" (env CAIRN_WORKSPACE_ROOT)")
}

// absRoot makes a workspace root absolute ("" stays unset).
func absRoot(root string) (string, error) {
	if root == "" {
		return "", nil
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return "", usagef("--workspace-root: %v", err)
	}
	return abs, nil
}
