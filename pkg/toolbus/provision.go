package toolbus

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/jsretry"
	"github.com/cairn-agents/cairn/pkg/provision"
	"github.com/nats-io/nats.go/jetstream"
)

// ProvisionOptions shape what [Provision] creates (pkg/provision owns the
// configurations). The zero value is a single-node setup with the defaults.
type ProvisionOptions = provision.ToolOptions

// Provision creates the streams and buckets of the tool protocol that do not
// exist yet: CAIRN_TOOLS, CAIRN_RESULTS, CAIRN_EVENTS and the KV buckets
// cairn_tools and cairn_toolstarts, configured as [provision.ToolStreams]
// and [provision.ToolBuckets] say. It is idempotent and never changes an
// existing stream or bucket (`cairn provision`, [provision.Apply], updates
// them); it only checks that an existing stream covers the subjects the
// protocol uses.
func Provision(ctx context.Context, js jetstream.JetStream, names events.Names, opts ProvisionOptions) error {
	if r := opts.Replicas; r < 0 || r > 5 {
		return fieldErr("replicas", "must be 1-5, got %d", r)
	}
	// Idempotent, so simply run again while JetStream cannot answer (a
	// service started with the cluster, or while a node is lost).
	return jsretry.Do(ctx, func(ctx context.Context) error { return create(ctx, js, names, opts) })
}

func create(ctx context.Context, js jetstream.JetStream, names events.Names, o ProvisionOptions) error {
	for _, cfg := range provision.ToolStreams(names, o) {
		_, err := js.CreateStream(ctx, cfg)
		if err != nil && !errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
			return fmt.Errorf("toolbus: create stream %s: %w", cfg.Name, err)
		}
		if err := checkStream(ctx, js, cfg); err != nil {
			return err
		}
	}
	for _, cfg := range provision.ToolBuckets(names, o) {
		if _, err := js.KeyValue(ctx, cfg.Bucket); err == nil {
			continue
		} else if !errors.Is(err, jetstream.ErrBucketNotFound) {
			return fmt.Errorf("toolbus: look up bucket %s: %w", cfg.Bucket, err)
		}
		if _, err := js.CreateKeyValue(ctx, cfg); err != nil && !errors.Is(err, jetstream.ErrBucketExists) {
			return fmt.Errorf("toolbus: create bucket %s: %w", cfg.Bucket, err)
		}
	}
	return nil
}

// Check reports whether everything [Provision] creates exists, wrapping
// [ErrNotProvisioned] with the name of the first thing missing.
func Check(ctx context.Context, js jetstream.JetStream, names events.Names) error {
	return jsretry.Do(ctx, func(ctx context.Context) error { return check(ctx, js, names) })
}

func check(ctx context.Context, js jetstream.JetStream, names events.Names) error {
	var o ProvisionOptions
	for _, cfg := range provision.ToolStreams(names, o) {
		if err := checkStream(ctx, js, cfg); err != nil {
			return err
		}
	}
	for _, cfg := range provision.ToolBuckets(names, o) {
		if _, err := js.KeyValue(ctx, cfg.Bucket); err != nil {
			if errors.Is(err, jetstream.ErrBucketNotFound) {
				return fmt.Errorf("%w: KV bucket %s does not exist", ErrNotProvisioned, cfg.Bucket)
			}
			return fmt.Errorf("toolbus: look up bucket %s: %w", cfg.Bucket, err)
		}
	}
	return nil
}

func checkStream(ctx context.Context, js jetstream.JetStream, want jetstream.StreamConfig) error {
	s, err := js.Stream(ctx, want.Name)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return fmt.Errorf("%w: stream %s does not exist", ErrNotProvisioned, want.Name)
	}
	if err != nil {
		return fmt.Errorf("toolbus: look up stream %s: %w", want.Name, err)
	}
	got := s.CachedInfo().Config
	for _, subj := range want.Subjects {
		if !slices.ContainsFunc(got.Subjects, func(p string) bool { return covers(p, subj) }) {
			return fmt.Errorf("%w: stream %s has subjects %v, not %s", ErrNotProvisioned, want.Name, got.Subjects, subj)
		}
	}
	if want.Retention == jetstream.WorkQueuePolicy && got.Retention != jetstream.WorkQueuePolicy {
		return fmt.Errorf("%w: stream %s has retention %s; work queue expected", ErrNotProvisioned, want.Name, got.Retention)
	}
	return nil
}

// covers reports whether subject pattern p matches every subject that
// pattern q matches (so a stream on "cairn.events.>" covers "cairn.events.*").
func covers(p, q string) bool {
	pt, qt := strings.Split(p, "."), strings.Split(q, ".")
	for i, tok := range pt {
		if tok == ">" {
			return len(qt) > i
		}
		if i >= len(qt) {
			return false
		}
		switch {
		case tok == "*":
			if qt[i] == ">" {
				return false
			}
		case tok != qt[i]:
			return false
		}
	}
	return len(pt) == len(qt)
}
