package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/provision"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/spf13/cobra"
)

func newProvisionCmd(e *env) *cobra.Command {
	c := &cobra.Command{
		Use:   "provision",
		Short: "create or update every stream and bucket Cairn needs (idempotent)",
		Args:  cobra.NoArgs,
	}
	natsURL := addNATSFlag(c)
	replicas := c.Flags().Int("replicas", 1, "stream and bucket replicas (3 on a cluster)")
	c.RunE = func(cmd *cobra.Command, _ []string) error {
		if *replicas < 1 || *replicas > 5 {
			return usagef("--replicas must be 1-5, got %d", *replicas)
		}
		nc, js, err := connectNATS(*natsURL, "cairn-provision")
		if err != nil {
			return err
		}
		defer nc.Close()
		if _, err := provisionAll(cmd.Context(), js, *replicas); err != nil {
			return err
		}
		// The orchestrator's buckets, replicated like the streams (it would
		// otherwise create them R1 at its first start).
		for _, cfg := range provision.OrchestratorBuckets(events.Names{}, *replicas, 5*time.Second) {
			if _, err := js.CreateOrUpdateKeyValue(cmd.Context(), cfg); err != nil {
				return fmt.Errorf("provision %s: %w", cfg.Bucket, err)
			}
		}
		// Services started right after this must find every stream
		// answering: wait until each has elected its leader.
		wctx, cancel := context.WithTimeout(cmd.Context(), time.Minute)
		defer cancel()
		if err := waitForLeaders(wctx, js); err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "provisioned on %s with %d replica(s)\n", *natsURL, *replicas)
		return nil
	}
	return c
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
