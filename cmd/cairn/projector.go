package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/cairn-agents/cairn/internal/opshttp"
	"github.com/cairn-agents/cairn/pkg/client"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/provision"
	"github.com/cairn-agents/cairn/pkg/telemetry"
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
		cfg := projector.Config{Dir: *data, Prefix: *prefix, BatchSize: *batch, Logger: newLogger(e, "projector"), Registry: telemetry.NewRegistry()}
		if err := validateStatic(cfg); err != nil {
			return err
		}
		nc, js, err := connectNATS(natsURL, "cairn-projector", provision.RoleProjector, cfg.Logger)
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
		Short: "recreate every read model from sequence 1: online through the gateway, or into --data",
		Long: `Recreate every read model from stream sequence 1.

Without --data, online, through the gateway (--server): the running projector
fills a fresh database while it keeps answering queries from the live one,
then switches over to it at once. Progress (entries/s, remaining) is printed
on stderr while it runs, then the digest of the live read models on stdout
(the same as before the rebuild if the log did not grow meanwhile). Ctrl-C
stops following; the rebuild goes on. (Admin-only once identity lands.)

With --data, offline, on NATS directly (--nats), for operators: into --data,
which must not exist or be empty, up to --until (default: the stream's last
sequence when it starts). The result is key for key what a live projector
holds at the same sequence; it prints the new database's digest (compare
with 'cairn projector dump').`,
		Args: cobra.NoArgs,
	}
	natsURL := addNATSFlag(c)
	data := c.Flags().String("data", "", "offline: directory of the new database (must be new or empty)")
	until := c.Flags().Uint64("until", 0, "offline: last stream sequence to apply (default: the stream's last)")
	prefix := addPrefixFlag(c)
	c.RunE = func(cmd *cobra.Command, _ []string) error {
		if *data == "" {
			for _, f := range []string{"until", "nats", "prefix"} {
				if cmd.Flags().Changed(f) {
					return usagef("--%s needs --data: it is for an offline rebuild; without --data the rebuild runs online through the gateway", f)
				}
			}
			cl, err := clientFrom(cmd)
			if err != nil {
				return err
			}
			return rebuildOnline(cmd.Context(), e, cl)
		}
		cfg := projector.Config{Dir: *data, Prefix: *prefix, Logger: newLogger(e, "projector")}
		if err := validateStatic(cfg); err != nil {
			return err
		}
		nc, js, err := connectNATS(natsURL, "cairn-projector-rebuild", provision.RoleProjector, cfg.Logger)
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
		Short: "print a digest of the read models: the live ones through the gateway, or of --data",
		Long: `Print the applied sequence, the number of keys and a SHA-256 over every key and
value of the read models.

Without --data, of the live read models of the running platform, through the
gateway (--server), from one snapshot.

With --data, of the database under --data, read-only. Pebble allows one
process per database: stop the projector first. --keys also prints every key
and value (values as JSON strings).

--json prints the digest as JSON.`,
		Args: cobra.NoArgs,
	}
	data := c.Flags().String("data", envOr("CAIRN_PROJECTOR_DATA", ""), "offline: database directory of a stopped projector (env CAIRN_PROJECTOR_DATA)")
	keys := c.Flags().Bool("keys", false, "offline: print every key and value")
	asJSON := c.Flags().Bool("json", false, "print the digest as JSON")
	c.RunE = func(cmd *cobra.Command, _ []string) error {
		if *data == "" {
			if *keys {
				return usagef("--keys needs --data: the gateway gives the live digest, not the keys")
			}
			cl, err := clientFrom(cmd)
			if err != nil {
				return err
			}
			d, err := cl.Digest(cmd.Context())
			if err != nil {
				return err
			}
			printDigest(e, projector.Digest(d), *asJSON)
			return nil
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
		printDigest(e, d, *asJSON)
		return nil
	}
	return c
}

func printDigest(e *env, d projector.Digest, asJSON bool) {
	if asJSON {
		b, _ := json.Marshal(d)
		fmt.Fprintln(e.stdout, string(b))
		return
	}
	fmt.Fprintf(e.stdout, "applied %d\nkeys %d\nsha256 %s\n", d.Applied, d.Keys, d.SHA256)
}

// rebuildOnline starts an online rebuild through the gateway, prints its
// progress on stderr until it has switched over, then the live digest.
func rebuildOnline(ctx context.Context, e *env, cl *client.Client) error {
	st, err := cl.StartRebuild(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stderr, "online rebuild started: through sequence %d, then up to the live projector's\n", st.Target)
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	var printed time.Time
	state := st.State
	for st.Running() {
		select {
		case <-ctx.Done():
			fmt.Fprintln(e.stderr, "stopped following; the rebuild goes on (follow it: GET /v1/admin/projector/rebuild)")
			return ctx.Err()
		case <-tick.C:
		}
		if st, err = cl.RebuildStatus(ctx); err != nil {
			return err
		}
		if st.Running() && (st.State != state || time.Since(printed) >= time.Second) {
			fmt.Fprintln(e.stderr, progressLine(st))
			printed, state = time.Now(), st.State
		}
	}
	if st.State != client.RebuildDone {
		return fmt.Errorf("online rebuild %s: %s (the live read models are unchanged)", st.State, st.Error)
	}
	fmt.Fprintf(e.stderr, "rebuilt online through sequence %d in %.1fs (%.0f entries/s); queries read the rebuilt models\n",
		st.Applied, st.ElapsedSeconds, st.EntriesPerSecond)
	d, err := cl.Digest(ctx)
	if err != nil {
		return err
	}
	printDigest(e, projector.Digest(d), false)
	return nil
}

// progressLine says where a running online rebuild stands.
func progressLine(st client.RebuildStatus) string {
	what := "rebuilding"
	if st.State == client.RebuildSwitching {
		what = "switching over"
	}
	line := fmt.Sprintf("%s: %d applied, %d remaining, %.0f entries/s", what, st.Applied, st.Remaining, st.EntriesPerSecond)
	if st.EtaSeconds > 0 {
		line += fmt.Sprintf(", about %s left", (time.Duration(st.EtaSeconds * float64(time.Second))).Round(100*time.Millisecond))
	}
	return line
}
