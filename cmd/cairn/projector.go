package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/cairn-agents/cairn/internal/opshttp"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/services/projector"
	"github.com/spf13/cobra"
)

func newProjectorCmd(e *env) *cobra.Command {
	c := &cobra.Command{
		Use:   "projector",
		Short: "run the projector: Pebble read models of the log, and their queries",
		Long: `Run the projector. It applies every entry of CAIRN_SESSIONS to the read models in
the Pebble database under --data, with one durable consumer, and serves the
queries (docs/api/projector-queries.md) with /healthz, /readyz and /metrics on
--http. SIGTERM or SIGINT: commit the last batch and stop.`,
		Args: cobra.NoArgs,
	}
	natsURL := addNATSFlag(c)
	f := c.Flags()
	data := f.String("data", envOr("CAIRN_PROJECTOR_DATA", ""), "Pebble database directory (env CAIRN_PROJECTOR_DATA; required)")
	httpAddr := f.String("http", envOr("CAIRN_HTTP", ""), "address for queries, /healthz, /readyz, /metrics (env CAIRN_HTTP; default none)")
	prefix := addPrefixFlag(c)
	batch := f.Int("batch", projector.DefaultBatchSize, "most entries applied in one Pebble batch")
	c.RunE = func(cmd *cobra.Command, _ []string) (err error) {
		if *data == "" {
			return usagef("--data is required (the directory of the projector's Pebble database)")
		}
		cfg := projector.Config{Dir: *data, Prefix: *prefix, BatchSize: *batch, Logger: newLogger(e, "projector")}
		if err := validateStatic(cfg); err != nil {
			return err
		}
		nc, js, err := connectNATS(*natsURL, "cairn-projector")
		if err != nil {
			return err
		}
		defer nc.Close()
		cfg.JetStream = js
		p, err := projector.New(cfg)
		if err != nil {
			return err
		}
		defer func() { err = errors.Join(err, p.Close()) }() // its database was written to
		var srv *opshttp.Server
		if *httpAddr != "" {
			srv, err = opshttp.Listen(*httpAddr, p.OpsHandler())
			if err != nil {
				return fmt.Errorf("listen on %s: %w", *httpAddr, err)
			}
			cfg.Logger.Info("projector: serving", "http", srv.Addr())
		}
		runErr := p.Run(cmd.Context())
		if srv != nil {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			if err := srv.Close(ctx); !errors.Is(err, context.DeadlineExceeded) {
				runErr = errors.Join(runErr, err) // requests still open at the deadline are cut off
			}
			cancel()
		}
		return runErr
	}
	c.AddCommand(newProjectorRebuildCmd(e), newProjectorDumpCmd(e))
	return c
}

// validateStatic checks a config before connecting: a bad flag is a usage
// error; the missing connection is not the caller's.
func validateStatic(cfg projector.Config) error {
	var ce *projector.ConfigError
	if err := cfg.Validate(); errors.As(err, &ce) && ce.Field != "JetStream" {
		return usagef("%v", err)
	}
	return nil
}

func addPrefixFlag(c *cobra.Command) *string {
	return c.Flags().String("prefix", envOr("CAIRN_PREFIX", events.DefaultPrefix), "namespace of streams and subjects (env CAIRN_PREFIX)")
}

func newProjectorRebuildCmd(e *env) *cobra.Command {
	c := &cobra.Command{
		Use:   "rebuild",
		Short: "recreate every read model from sequence 1 into a fresh database",
		Long: `Recreate every read model from stream sequence 1 into --data, which must not exist
or be empty, up to --until (default: the stream's last sequence when it starts).
The result is key for key what a live projector holds at the same sequence;
it prints the new database's digest (compare with 'cairn projector dump').`,
		Args: cobra.NoArgs,
	}
	natsURL := addNATSFlag(c)
	data := c.Flags().String("data", "", "directory of the new database (required; must be new or empty)")
	until := c.Flags().Uint64("until", 0, "last stream sequence to apply (default: the stream's last)")
	prefix := addPrefixFlag(c)
	c.RunE = func(cmd *cobra.Command, _ []string) error {
		if *data == "" {
			return usagef("--data is required (a new or empty directory)")
		}
		cfg := projector.Config{Dir: *data, Prefix: *prefix, Logger: newLogger(e, "projector")}
		if err := validateStatic(cfg); err != nil {
			return err
		}
		nc, js, err := connectNATS(*natsURL, "cairn-projector-rebuild")
		if err != nil {
			return err
		}
		defer nc.Close()
		cfg.JetStream = js
		start := time.Now()
		res, err := projector.Rebuild(cmd.Context(), cfg, *until)
		if err != nil {
			return err
		}
		elapsed := time.Since(start)
		rate := float64(res.Applied) / elapsed.Seconds()
		dg, err := projector.Dump(*data, nil) // Rebuild leaves the digest to Dump
		if err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "applied %d\nkeys %d\nsha256 %s\n", dg.Applied, dg.Keys, dg.SHA256)
		fmt.Fprintf(e.stderr, "rebuilt through sequence %d in %s (%.0f entries/s)\n", res.Applied, elapsed.Round(time.Millisecond), rate)
		return nil
	}
	return c
}

func newProjectorDumpCmd(e *env) *cobra.Command {
	c := &cobra.Command{
		Use:   "dump",
		Short: "print a digest of a projector database (stopped), and optionally its keys",
		Long: `Print the applied sequence, the number of keys and a SHA-256 over every key and
value of the database under --data, read-only. Pebble allows one process per
database: stop the projector first. --keys also prints every key and value
(values as JSON strings), --json prints the digest as JSON.`,
		Args: cobra.NoArgs,
	}
	data := c.Flags().String("data", envOr("CAIRN_PROJECTOR_DATA", ""), "database directory (env CAIRN_PROJECTOR_DATA; required)")
	keys := c.Flags().Bool("keys", false, "print every key and value")
	asJSON := c.Flags().Bool("json", false, "print the digest as JSON")
	c.RunE = func(cmd *cobra.Command, _ []string) error {
		if *data == "" {
			return usagef("--data is required")
		}
		var each func(k, v []byte) error
		if *keys {
			each = func(k, v []byte) error {
				kb, _ := json.Marshal(string(k))
				vb, _ := json.Marshal(string(v))
				_, err := fmt.Fprintf(e.stdout, "%s %s\n", kb, vb)
				return err
			}
		}
		d, err := projector.Dump(*data, each)
		if err != nil {
			return err
		}
		if *asJSON {
			b, _ := json.Marshal(d)
			fmt.Fprintln(e.stdout, string(b))
			return nil
		}
		fmt.Fprintf(e.stdout, "applied %d\nkeys %d\nsha256 %s\n", d.Applied, d.Keys, d.SHA256)
		return nil
	}
	return c
}
