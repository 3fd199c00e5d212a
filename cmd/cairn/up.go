package main

import (
	"fmt"
	"io"
	"log/slog"
	"path/filepath"

	"github.com/cairn-agents/cairn/pkg/sandbox"
	"github.com/cairn-agents/cairn/pkg/telemetry"
	"github.com/spf13/cobra"
)

func newUpCmd(e *env) *cobra.Command {
	c := &cobra.Command{
		Use:   "up",
		Short: "run every service in one process on an embedded NATS server",
		Args:  cobra.NoArgs,
	}
	data := c.Flags().String("data", envOr("CAIRN_DATA", ".cairn"), "data directory: NATS store, read models, workspaces (env CAIRN_DATA)")
	addr := c.Flags().String("http", "127.0.0.1:8080", "gateway listen address")
	natsListen := c.Flags().String("nats-listen", "127.0.0.1:4222", "embedded NATS client address, for toolrunners and operator commands")
	root := c.Flags().String("workspace-root", "", "root of session workspaces (default <data>/workspaces)")
	script := c.Flags().String("script", envOr("CAIRN_SCRIPT", ""), "script file of the scripted provider (env CAIRN_SCRIPT)")
	model := c.Flags().String("model", envOr("CAIRN_MODEL", "scripted/demo"), "default model of new sessions, provider/model (env CAIRN_MODEL)")
	sync := c.Flags().Bool("sync", false, "fsync every write (survives a lost machine, about 10x slower)")
	sandboxLevel := addSandboxFlag(c)
	allowHosts := addAllowHostsFlag(c)
	mcpf := addMCPFlags(c)
	noExt := addNoExtensionsFlag(c)
	logFormat := c.Flags().String("log-format", "auto", "log format: text, json, or auto (text on a terminal, else JSON)")
	c.RunE = func(cmd *cobra.Command, _ []string) error {
		mcps, err := mcpf.parse()
		if err != nil {
			return err
		}
		level, err := sandbox.ParseLevel(*sandboxLevel)
		if err != nil {
			return usagef("--sandbox: %v", err)
		}
		hosts, err := sandbox.ParseAllowHosts(*allowHosts)
		if err != nil {
			return usagef("--sandbox-allow-hosts: %v", err)
		}
		abs, err := filepath.Abs(*data)
		if err != nil {
			return err
		}
		// Trace ids and credentials redacted in both formats.
		var log *slog.Logger
		switch *logFormat {
		case "json":
			log = slog.New(telemetry.NewHandler(e.stderr, nil))
		case "text":
			log = slog.New(telemetry.NewTextHandler(e.stderr, nil))
		case "auto":
			if isTerminal(e.stderr) {
				log = slog.New(telemetry.NewTextHandler(e.stderr, nil))
			} else {
				log = slog.New(telemetry.NewHandler(e.stderr, nil))
			}
		default:
			return usagef("--log-format: %q is not text, json or auto", *logFormat)
		}
		p, err := startPlatform(cmd.Context(), platformConfig{DataDir: abs, HTTPAddr: *addr, NATSListen: *natsListen,
			WorkspaceRoot: *root, Script: *script, Model: *model, SyncAlways: *sync, Sandbox: level,
			SandboxPolicy: sandbox.Policy{AllowHosts: hosts}, MCP: mcps, NoExtensions: *noExt, Logger: log})
		if err != nil {
			return err
		}
		// Recorded before the first line: a client started on it finds the key.
		keyLine := recordAdminKey(p)
		fmt.Fprintf(e.stdout, "cairn is up: API %s, NATS %s, data %s, admin credentials %s\n", p.URL, p.NATS, abs, p.Creds)
		fmt.Fprintln(e.stdout, keyLine)
		if !*noExt {
			fmt.Fprintf(e.stdout, "extensions connect to NATS %s with the seed %s (docs/extensions.md)\n", p.NATS, p.ExtensionCreds)
		}
		if isTerminal(e.stdout) || isTerminal(e.stderr) {
			printBanner(e.stdout, p)
		}
		return p.wait()
	}
	return c
}

// printBanner writes what a person at a terminal needs to start: where the
// API and the console are, and the files holding the admin key and the
// NATS credentials.
func printBanner(w io.Writer, p *platform) {
	fmt.Fprintf(w, `
  Cairn is up
    API               %s
    console           %s/  (log in with the admin key)
    admin key         %s
    NATS              %s
    NATS credentials  %s  (operator commands: --nats %s --creds FILE)

`, p.URL, p.URL, p.KeyFile, p.NATS, p.Creds, p.NATS)
}

// recordAdminKey records the platform admin key for the client commands of
// this user (serverkeys.go), so they need no --token, and returns the line
// saying where the key is.
func recordAdminKey(p *platform) string {
	state := "admin key"
	if p.NewKey {
		state = "admin key created"
	}
	if err := rememberServer(p.URL, p.KeyFile); err != nil {
		return fmt.Sprintf("%s: %s (not recorded for the cairn commands: %v; pass --token or CAIRN_TOKEN)", state, p.KeyFile, err)
	}
	return fmt.Sprintf("%s: %s (the cairn commands of this user use it for %s)", state, p.KeyFile, p.URL)
}
