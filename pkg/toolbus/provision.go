package toolbus

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/jsretry"
	"github.com/nats-io/nats.go/jetstream"
)

// ProvisionOptions shape what [Provision] creates. The zero value is a
// single-node setup with the defaults below.
type ProvisionOptions struct {
	Replicas int // stream and bucket replicas; default 1 (use 3 on a cluster)
	// ResultsMaxAge bounds how long a result waits in CAIRN_RESULTS for its
	// session's owner; default 7 days.
	ResultsMaxAge time.Duration
	// Duplicates is the dedup window of CAIRN_TOOLS and CAIRN_RESULTS; it must
	// exceed the consumers' AckWait; default 10 minutes.
	Duplicates time.Duration
	// EventsMaxAge is the max age of CAIRN_EVENTS if Provision creates it;
	// default 1 hour.
	EventsMaxAge time.Duration
	// StartsTTL is how long a call's start record lives; default 24 hours.
	StartsTTL time.Duration
}

func (o ProvisionOptions) withDefaults() ProvisionOptions {
	if o.Replicas == 0 {
		o.Replicas = 1
	}
	if o.ResultsMaxAge == 0 {
		o.ResultsMaxAge = 7 * 24 * time.Hour
	}
	if o.Duplicates == 0 {
		o.Duplicates = 10 * time.Minute
	}
	if o.EventsMaxAge == 0 {
		o.EventsMaxAge = time.Hour
	}
	if o.StartsTTL == 0 {
		o.StartsTTL = 24 * time.Hour
	}
	return o
}

// StreamConfigs are the streams of the tool protocol: CAIRN_TOOLS,
// CAIRN_RESULTS and CAIRN_EVENTS under the default prefix (zero options mean
// their defaults). [Provision] creates each missing one so; `cairn provision`
// (pkg/provision) creates or updates each to exactly this.
func StreamConfigs(n events.Names, opts ProvisionOptions) []jetstream.StreamConfig {
	o := opts.withDefaults()
	return []jetstream.StreamConfig{
		{Name: n.ToolsStream(), Subjects: []string{n.AllTools()}, Retention: jetstream.WorkQueuePolicy,
			Storage: jetstream.FileStorage, Replicas: o.Replicas, Duplicates: o.Duplicates,
			Description: "Cairn tool calls waiting for a toolrunner"},
		{Name: n.ResultsStream(), Subjects: []string{n.AllResults()}, Retention: jetstream.LimitsPolicy,
			Storage: jetstream.FileStorage, Replicas: o.Replicas, Duplicates: o.Duplicates, MaxAge: o.ResultsMaxAge,
			Description: "Cairn tool and compaction results on their way to the session's owner"},
		{Name: n.EventsStream(), Subjects: []string{n.AllEvents()}, Retention: jetstream.LimitsPolicy,
			Storage: jetstream.FileStorage, Replicas: o.Replicas, MaxAge: o.EventsMaxAge,
			Description: "Cairn live agent events"},
	}
}

// BucketConfigs are the KV buckets of the tool protocol: cairn_tools and
// cairn_toolstarts under the default prefix, like [StreamConfigs].
func BucketConfigs(n events.Names, opts ProvisionOptions) []jetstream.KeyValueConfig {
	o := opts.withDefaults()
	return []jetstream.KeyValueConfig{
		{Bucket: n.ToolsBucket(), History: 1, Replicas: o.Replicas, Storage: jetstream.FileStorage,
			Description: "Cairn tool registry: one key per tool name"},
		{Bucket: n.ToolStartsBucket(), History: 1, Replicas: o.Replicas, Storage: jetstream.FileStorage,
			TTL: o.StartsTTL, Description: "Cairn tool call starts, keyed by session and tool call id"},
	}
}

// Provision creates the streams and buckets of the tool protocol that do not
// exist yet: CAIRN_TOOLS, CAIRN_RESULTS, CAIRN_EVENTS and the KV buckets
// cairn_tools and cairn_toolstarts. It is idempotent and never changes an
// existing stream or bucket (`cairn provision`, pkg/provision, updates them
// to [StreamConfigs] and [BucketConfigs]); it only checks that an existing
// stream covers the subjects the protocol uses.
func Provision(ctx context.Context, js jetstream.JetStream, names events.Names, opts ProvisionOptions) error {
	o := opts.withDefaults()
	if o.Replicas < 1 || o.Replicas > 5 {
		return fieldErr("replicas", "must be 1-5, got %d", o.Replicas)
	}
	// Idempotent, so simply run again while JetStream cannot answer (a
	// service started with the cluster, or while a node is lost).
	return jsretry.Do(ctx, func(ctx context.Context) error { return provision(ctx, js, names, o) })
}

func provision(ctx context.Context, js jetstream.JetStream, names events.Names, o ProvisionOptions) error {
	for _, cfg := range StreamConfigs(names, o) {
		_, err := js.CreateStream(ctx, cfg)
		if err != nil && !errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
			return fmt.Errorf("toolbus: create stream %s: %w", cfg.Name, err)
		}
		if err := checkStream(ctx, js, cfg); err != nil {
			return err
		}
	}
	for _, cfg := range BucketConfigs(names, o) {
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
	o := ProvisionOptions{}.withDefaults()
	for _, cfg := range StreamConfigs(names, o) {
		if err := checkStream(ctx, js, cfg); err != nil {
			return err
		}
	}
	for _, cfg := range BucketConfigs(names, o) {
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
