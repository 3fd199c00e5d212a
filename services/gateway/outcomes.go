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

// A command no log entry can name — refused where the session has no log
// (a refused create, a prompt to a session never created), or applied with
// nothing written (a navigation to the active leaf) — has its outcome
// recorded by the orchestrator in the outcomes bucket, under <tenant>.<sid>.<command
// id> (events.Outcome, docs/orchestrator.md). The gateway follows the
// bucket's stream with one consumer for ?wait=applied, like the log, and
// reads a key for the command status.

// outcomes is the gateway's view of the outcomes bucket.
type outcomes struct {
	js     jetstream.JetStream
	bucket string
	mu     sync.Mutex
	kv     jetstream.KeyValue
}

// stream and filter are the bucket's stream and its subjects, for the fanout.
func (r *outcomes) stream() string { return events.KVStream(r.bucket) }
func (r *outcomes) filter() string { return events.KVSubjects(r.bucket) }

// subject is where the outcome of commandID of session sid is stored.
func (r *outcomes) subject(sid events.SessionRef, commandID string) string {
	return events.KVSubject(r.bucket, events.OutcomeKey(sid, commandID))
}

// open returns the bucket, creating it as `cairn provision` does when it is
// missing (a gateway started before the first orchestrator).
func (r *outcomes) open(ctx context.Context, n events.Names) (jetstream.KeyValue, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.kv != nil {
		return r.kv, nil
	}
	err := jsretry.Do(ctx, func(ctx context.Context) error {
		kv, err := r.js.KeyValue(ctx, r.bucket)
		if errors.Is(err, jetstream.ErrBucketNotFound) {
			kv, err = r.js.CreateKeyValue(ctx, provision.OutcomesBucket(n, 1, provision.CommandsMaxAge))
			if errors.Is(err, jetstream.ErrBucketExists) {
				kv, err = r.js.KeyValue(ctx, r.bucket)
			}
		}
		r.kv = kv
		return err
	})
	if err != nil {
		r.kv = nil
		return nil, fmt.Errorf("outcomes bucket %s: %w", r.bucket, err)
	}
	return r.kv, nil
}

// lookupOutcome returns the recorded outcome of commandID of session sid, if any.
func (g *Gateway) lookupOutcome(ctx context.Context, sid events.SessionRef, commandID string) (*events.Outcome, error) {
	kv, err := g.outcomes.open(ctx, g.cfg.Names)
	if err != nil {
		return nil, err
	}
	e, err := kv.Get(ctx, events.OutcomeKey(sid, commandID))
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	r, err := events.DecodeOutcome(e.Value())
	if err != nil {
		return nil, fmt.Errorf("outcome of %s: %w", commandID, err)
	}
	return &r, nil
}
