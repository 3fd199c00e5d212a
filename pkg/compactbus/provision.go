package compactbus

import (
	"context"
	"errors"
	"fmt"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/provision"
	"github.com/nats-io/nats.go/jetstream"
)

// ErrNotProvisioned says a stream of the protocol is missing.
var ErrNotProvisioned = errors.New("compactbus: not provisioned")

// Provision creates CAIRN_COMPACTIONS as [provision.CompactionsStream]
// configures it if it does not exist (an existing one is left as it is;
// `cairn provision`, [provision.Apply], updates it) and checks that the
// results stream (toolbus.Provision creates it) exists.
func Provision(ctx context.Context, js jetstream.JetStream, n events.Names, replicas int) error {
	cfg := provision.CompactionsStream(n, replicas)
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
