package gateway

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/jsretry"
	"github.com/cairn-agents/cairn/pkg/provision"
	"github.com/nats-io/nats.go/jetstream"
)

// A command refused where the session has no log (a refused create, a
// prompt to a session never created) is recorded by the orchestrator in
// the refusals bucket, under <sid>.<command id>, instead of a
// command_rejected entry (docs/orchestrator.md). The gateway follows the
// bucket's stream with one consumer for ?wait=applied, like the log, and
// reads a key for the command status.

// refusals is the gateway's view of the refusals bucket.
type refusals struct {
	js     jetstream.JetStream
	bucket string
	mu     sync.Mutex
	kv     jetstream.KeyValue
}

// stream and filter are the bucket's stream and its subjects, for the fanout.
func (r *refusals) stream() string { return "KV_" + r.bucket }
func (r *refusals) filter() string { return "$KV." + r.bucket + ".>" }

// subject is where the refusal of commandID of session sid is stored.
func (r *refusals) subject(sid, commandID string) string {
	return "$KV." + r.bucket + "." + events.RefusalKey(sid, commandID)
}

// open returns the bucket, creating it as `cairn provision` does when it is
// missing (a gateway started before the first orchestrator).
func (r *refusals) open(ctx context.Context, n events.Names) (jetstream.KeyValue, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.kv != nil {
		return r.kv, nil
	}
	err := jsretry.Do(ctx, func(ctx context.Context) error {
		kv, err := r.js.KeyValue(ctx, r.bucket)
		if errors.Is(err, jetstream.ErrBucketNotFound) {
			kv, err = r.js.CreateKeyValue(ctx, provision.RefusalsBucket(n, 1, provision.CommandsMaxAge))
			if errors.Is(err, jetstream.ErrBucketExists) {
				kv, err = r.js.KeyValue(ctx, r.bucket)
			}
		}
		r.kv = kv
		return err
	})
	if err != nil {
		r.kv = nil
		return nil, fmt.Errorf("refusals bucket %s: %w", r.bucket, err)
	}
	return r.kv, nil
}

// lookupRefusal returns the recorded refusal of commandID of session sid, if any.
func (g *Gateway) lookupRefusal(ctx context.Context, sid, commandID string) (*events.Refusal, error) {
	kv, err := g.refusals.open(ctx, g.cfg.Names)
	if err != nil {
		return nil, err
	}
	e, err := kv.Get(ctx, events.RefusalKey(sid, commandID))
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	r, err := events.DecodeRefusal(e.Value())
	if err != nil {
		return nil, fmt.Errorf("refusal of %s: %w", commandID, err)
	}
	return &r, nil
}
