package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/provision"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/spf13/cobra"
)

func newProvisionCmd(e *env) *cobra.Command {
	c := &cobra.Command{
		Use:   "provision",
		Short: "create or update every stream, bucket and shared consumer Cairn needs (idempotent)",
		Long: `Create every stream, KV bucket, object store and shared durable consumer Cairn
needs that is missing, and update every existing one to Cairn's configuration
with --replicas (services that started first create them R1). Prints one line
per object (created, updated with what changed, or unchanged), then waits
until every stream has a leader. Refuses, changing nothing, when an existing
stream differs in a setting that cannot change in place (storage, retention,
partitions), and when it holds sessions of the layout before tenants
(cairn.session.<sid>, one token): --migrate copies those to the default tenant and moves
the command stream to the tenant layout (stop the orchestrators first; see
docs/tenancy.md). The leases bucket's TTL and the consumers' AckWait are kept:
the services set them at start.

On a cluster with authentication, connect as the admin (--creds admin.nk);
` + "`cairn provision users`" + ` creates the users and ` + "`cairn provision certs`" + ` the TLS files.`,
		Args: cobra.NoArgs,
	}
	c.AddCommand(newProvisionUsersCmd(e), newProvisionCertsCmd(e))
	natsURL := addNATSFlag(c)
	replicas := c.Flags().Int("replicas", 1, "stream and bucket replicas (3 on a cluster)")
	pools := c.Flags().StringSlice("pools", []string{provision.DefaultPool}, "toolrunner pools whose shared consumer to create, comma separated")
	migrate := c.Flags().Bool("migrate", false, "move an installation of the layout before tenants to the tenant layout (its sessions become the default tenant's)")
	wait := c.Flags().Duration("wait", 0, "retry while NATS is not reachable or not ready yet, for up to this long (0: fail at once); for a cluster that is still starting")
	c.RunE = func(cmd *cobra.Command, _ []string) error {
		if *replicas < 1 || *replicas > 5 {
			return usagef("--replicas must be 1-5, got %d", *replicas)
		}
		for _, p := range *pools {
			if err := events.ValidateToolName("--pools", p); err != nil {
				return usagef("--pools: pool name %q: 1-64 characters of A-Z a-z 0-9 _ - expected", p)
			}
		}
		if *wait < 0 {
			return usagef("--wait must not be negative, got %s", *wait)
		}
		nc, js, err := provisionOnce(cmd.Context(), e, natsURL, provision.Options{Replicas: *replicas, Pools: *pools, Migrate: *migrate}, *wait)
		if err != nil {
			return err
		}
		defer nc.Close()
		// Services started right after this must find every stream
		// answering: wait until each has elected its leader.
		wctx, cancel := context.WithTimeout(cmd.Context(), time.Minute)
		defer cancel()
		if err := waitForLeaders(wctx, js); err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "provisioned on %s with %d replica(s)\n", natsURL.URL, *replicas)
		return nil
	}
	return c
}

// provisionOnce connects and applies opts, trying again every second while
// the attempt fails and wait has not passed since the first: the nodes of a
// cluster that starts with its services answer one by one, and JetStream
// has no meta leader until a majority runs. A refusal (a setting that
// cannot change in place) is never retried.
func provisionOnce(ctx context.Context, e *env, f *natsFlags, opts provision.Options, wait time.Duration) (*nats.Conn, jetstream.JetStream, error) {
	deadline := time.Now().Add(wait)
	for {
		nc, js, err := connectNATS(f, "cairn-provision", provision.RoleAdmin, nil)
		if err == nil {
			var report provision.Report
			report, err = provision.Apply(ctx, js, events.Names{}, opts)
			for _, ch := range report {
				fmt.Fprintln(e.stdout, ch)
			}
			if err == nil {
				return nc, js, nil
			}
			nc.Close()
		}
		if errors.Is(err, provision.ErrIncompatible) || errors.Is(err, provision.ErrLegacyLayout) || time.Now().After(deadline) || ctx.Err() != nil {
			return nil, nil, err
		}
		fmt.Fprintf(e.stderr, "provision: %v; trying again\n", err)
		select {
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// waitForLeaders waits until every stream (buckets included) answers with a
// leader, or ctx ends; the error then names the first stream still without
// one.
func waitForLeaders(ctx context.Context, js jetstream.JetStream) error {
	var names []string
	lister := js.StreamNames(ctx)
	for n := range lister.Name() {
		names = append(names, n)
	}
	if err := lister.Err(); err != nil {
		return fmt.Errorf("list streams: %w", err)
	}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for _, n := range names {
		for {
			s, err := js.Stream(ctx, n)
			if err == nil {
				if ci := s.CachedInfo().Cluster; ci == nil || ci.Leader != "" {
					break
				}
				err = errors.New("no leader yet")
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("stream %s is not ready: %w", n, err)
			case <-tick.C:
			}
		}
	}
	return nil
}
