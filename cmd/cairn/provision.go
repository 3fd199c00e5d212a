package main

import (
	"fmt"
	"time"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/provision"

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
		fmt.Fprintf(e.stdout, "provisioned on %s with %d replica(s)\n", *natsURL, *replicas)
		return nil
	}
	return c
}
