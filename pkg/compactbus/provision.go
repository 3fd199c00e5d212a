package compactbus

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/nats-io/nats.go/jetstream"
)

// ErrNotProvisioned says a stream of the protocol is missing.
var ErrNotProvisioned = errors.New("compactbus: not provisioned")

// ConsumerName is the durable consumer every compactor worker shares.
const ConsumerName = "compactor"

// StreamConfig is CAIRN_COMPACTIONS: a work queue of requests.
func StreamConfig(n events.Names, replicas int) jetstream.StreamConfig {
	return jetstream.StreamConfig{Name: n.CompactionsStream(), Subjects: []string{n.AllCompactions()},
		Retention: jetstream.WorkQueuePolicy, Storage: jetstream.FileStorage, Replicas: max(replicas, 1),
		Duplicates: 10 * time.Minute, MaxAge: 24 * time.Hour,
		Description: "Cairn compaction and branch summary requests waiting for a compactor"}
}

// Provision creates CAIRN_COMPACTIONS if it does not exist (an existing one
// is left as it is; `cairn provision`, pkg/provision, updates it to
// [StreamConfig]) and checks that the results stream (toolbus.Provision
// creates it) exists.
func Provision(ctx context.Context, js jetstream.JetStream, n events.Names, replicas int) error {
	cfg := StreamConfig(n, replicas)
	if _, err := js.CreateStream(ctx, cfg); err != nil && !errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
		return fmt.Errorf("compactbus: create stream %s: %w", cfg.Name, err)
	}
	return Check(ctx, js, n)
}

// Check reports whether both streams of the protocol exist.
func Check(ctx context.Context, js jetstream.JetStream, n events.Names) error {
	for _, name := range []string{n.CompactionsStream(), n.ResultsStream()} {
		if _, err := js.Stream(ctx, name); err != nil {
			if errors.Is(err, jetstream.ErrStreamNotFound) {
				return fmt.Errorf("%w: stream %s does not exist (run cairn provision)", ErrNotProvisioned, name)
			}
			return fmt.Errorf("compactbus: look up stream %s: %w", name, err)
		}
	}
	return nil
}

// DefaultAckWait is the shared consumer's AckWait unless a compactor sets
// its own.
const DefaultAckWait = 30 * time.Second

// ConsumerConfig is the durable consumer every compactor shares on
// CAIRN_COMPACTIONS ([ConsumerName]), with the given AckWait. Compactors
// create or update it to this at start; `cairn provision` (pkg/provision)
// creates it with [DefaultAckWait] before the first compactor starts. Its
// replicas follow the stream's.
func ConsumerConfig(n events.Names, ackWait time.Duration) jetstream.ConsumerConfig {
	return jetstream.ConsumerConfig{Durable: ConsumerName, FilterSubject: n.AllCompactions(),
		AckPolicy: jetstream.AckExplicitPolicy, AckWait: ackWait, MaxDeliver: -1,
		MaxAckPending: 10000, Description: "Cairn compactors"}
}
