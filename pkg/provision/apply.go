package provision

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/jsretry"
	"github.com/nats-io/nats.go/jetstream"
)

// Apply creates every stream, KV bucket, object store and durable consumer
// of [Config] that is missing and updates every existing one to Cairn's
// configuration with opts.Replicas, and reports what it did to each. Run
// again, it reports every object unchanged and changes nothing.
//
// It first looks everything up and checks that no existing object differs
// in a setting that cannot be changed in place (see [IncompatibleError]);
// if one does, it changes nothing and returns every such difference. Then
// it provisions streams, KV buckets, object stores and consumers in that
// order, retrying each call while JetStream cannot answer (pkg/jsretry)
// until ctx ends. An error after that (ctx ended, the server refused, for
// example replicas beyond the cluster's size) leaves the objects before it
// provisioned; the returned report lists them. Apply does not wait for new
// replicas to catch up or for leaders to be elected.
func Apply(ctx context.Context, js jetstream.JetStream, n events.Names, opts Options) (Report, error) {
	set, err := Config(n, opts)
	if err != nil {
		return nil, err
	}
	streams := streamItems(n, set)
	for i := range streams {
		if err := streams[i].lookup(ctx, js); err != nil {
			return nil, err
		}
	}
	consumers := make([]consumerItem, len(set.Consumers))
	for i, c := range set.Consumers {
		consumers[i] = consumerItem{Consumer: c}
		if err := consumers[i].lookup(ctx, js); err != nil {
			return nil, err
		}
	}
	o, _ := opts.withDefaults() // Config checked them
	partitions := o.Partitions
	var errs []error
	var legacy map[string]uint64 // old-layout session subjects and their counts
	for i, it := range streams {
		if it.have == nil {
			continue
		}
		switch it.name {
		case n.SessionsStream():
			if legacy, err = legacySessions(ctx, js, n, it.have); err != nil {
				return nil, fmt.Errorf("provision: look up %s: %w", it.name, err)
			}
			if len(legacy) > 0 && !opts.Migrate {
				errs = append(errs, &LegacyLayoutError{Stream: it.name, Sessions: len(legacy)})
			}
		case n.CommandsStream():
			if t := it.have.SubjectTransform; opts.Migrate && t != nil && *t == *legacyTransform(n, partitions) {
				streams[i].have.SubjectTransform = it.fixed.SubjectTransform // the one change migrating makes
				it = streams[i]
			}
		}
		errs = append(errs, streamConflicts(it.kind, it.name, *it.have, it.fixed)...)
	}
	for _, it := range consumers {
		if it.have != nil {
			errs = append(errs, consumerConflicts(it.name(), *it.have, it.Config)...)
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if len(legacy) > 0 {
		// Take both layouts while the sessions move, then the new one only
		// (the stream's own item below).
		for _, it := range streams {
			if it.name == n.SessionsStream() {
				both := it.fixed
				both.Subjects = append(slices.Clone(both.Subjects), n.LegacySessions())
				if _, err := js.UpdateStream(ctx, both); err != nil {
					return nil, fmt.Errorf("provision: migrate %s: %w", it.name, err)
				}
			}
		}
		if err := migrateSessions(ctx, js, n, legacy); err != nil {
			return nil, err
		}
	}
	var report Report
	for _, it := range streams {
		c, err := it.apply(ctx, js)
		if err != nil {
			return report, err
		}
		report = append(report, c)
	}
	for _, it := range consumers {
		c, err := it.apply(ctx, js)
		if err != nil {
			return report, err
		}
		report = append(report, c)
	}
	return report, nil
}

// streamItem is a stream, or the stream under a KV bucket or object store.
type streamItem struct {
	kind   Kind
	name   string                 // the stream's or the bucket's name
	stream string                 // the stream's name (KV_<bucket>, OBJ_<bucket>)
	fixed  jetstream.StreamConfig // the settings that cannot change in place
	// put creates or updates the object; have is the existing stream's
	// configuration or nil.
	put  func(ctx context.Context, js jetstream.JetStream, have *jetstream.StreamConfig) error
	have *jetstream.StreamConfig
}

func streamItems(n events.Names, set Set) []streamItem {
	var items []streamItem
	for _, cfg := range set.Streams {
		items = append(items, streamItem{kind: KindStream, name: cfg.Name, stream: cfg.Name, fixed: cfg,
			put: func(ctx context.Context, js jetstream.JetStream, _ *jetstream.StreamConfig) error {
				_, err := js.CreateOrUpdateStream(ctx, cfg)
				return err
			}})
	}
	for _, cfg := range set.KeyValues {
		// KV buckets are limits streams that deny deletes (nats.go).
		fixed := jetstream.StreamConfig{Storage: cfg.Storage, Retention: jetstream.LimitsPolicy, DenyDelete: true,
			AllowMsgTTL: cfg.LimitMarkerTTL != 0}
		items = append(items, streamItem{kind: KindKeyValue, name: cfg.Bucket, stream: events.KVStream(cfg.Bucket), fixed: fixed,
			put: func(ctx context.Context, js jetstream.JetStream, have *jetstream.StreamConfig) error {
				if cfg.Bucket == n.LeasesBucket() && have != nil && have.MaxAge > 0 {
					cfg.TTL = have.MaxAge // each orchestrator sets it from its lease TTL
				}
				_, err := js.CreateOrUpdateKeyValue(ctx, cfg)
				return err
			}})
	}
	for _, cfg := range set.ObjectStores {
		fixed := jetstream.StreamConfig{Storage: cfg.Storage, Retention: jetstream.LimitsPolicy}
		items = append(items, streamItem{kind: KindObjectStore, name: cfg.Bucket, stream: events.ObjectStream(cfg.Bucket), fixed: fixed,
			put: func(ctx context.Context, js jetstream.JetStream, _ *jetstream.StreamConfig) error {
				_, err := js.CreateOrUpdateObjectStore(ctx, cfg)
				return err
			}})
	}
	return items
}

// lookup records the existing stream's configuration, or nil.
func (it *streamItem) lookup(ctx context.Context, js jetstream.JetStream) error {
	cfg, err := streamConfig(ctx, js, it.stream)
	if err != nil {
		return fmt.Errorf("provision: look up %s %s: %w", it.kind, it.name, err)
	}
	it.have = cfg
	return nil
}

func streamConfig(ctx context.Context, js jetstream.JetStream, name string) (*jetstream.StreamConfig, error) {
	var cfg *jetstream.StreamConfig
	err := jsretry.Do(ctx, func(ctx context.Context) error {
		s, err := js.Stream(ctx, name)
		if errors.Is(err, jetstream.ErrStreamNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		c := s.CachedInfo().Config
		cfg = &c
		return nil
	})
	return cfg, err
}

func (it streamItem) apply(ctx context.Context, js jetstream.JetStream) (Change, error) {
	err := jsretry.Do(ctx, func(ctx context.Context) error {
		return createdMeanwhile(func() error { return it.put(ctx, js, it.have) })
	})
	if err != nil {
		return Change{}, fmt.Errorf("provision: %s %s: %w", it.kind, it.name, err)
	}
	now, err := streamConfig(ctx, js, it.stream)
	if err == nil && now == nil {
		err = jetstream.ErrStreamNotFound
	}
	if err != nil {
		return Change{}, fmt.Errorf("provision: look up %s %s after provisioning it: %w", it.kind, it.name, err)
	}
	return change(it.kind, it.name, it.have, *now), nil
}

// createdMeanwhile runs put again if it failed because a service created
// the stream between put's update (not found) and its create.
func createdMeanwhile(put func() error) error {
	err := put()
	if errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
		err = put()
	}
	return err
}

// consumerItem is a durable consumer and its existing configuration.
type consumerItem struct {
	Consumer
	have *jetstream.ConsumerConfig
}

func (it consumerItem) name() string { return it.Config.Durable + " on " + it.Stream }

func (it *consumerItem) lookup(ctx context.Context, js jetstream.JetStream) error {
	err := jsretry.Do(ctx, func(ctx context.Context) error {
		c, err := js.Consumer(ctx, it.Stream, it.Config.Durable)
		if errors.Is(err, jetstream.ErrConsumerNotFound) || errors.Is(err, jetstream.ErrStreamNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		cfg := c.CachedInfo().Config
		it.have = &cfg
		return nil
	})
	if err != nil {
		return fmt.Errorf("provision: look up %s %s: %w", KindConsumer, it.name(), err)
	}
	return nil
}

func (it consumerItem) apply(ctx context.Context, js jetstream.JetStream) (Change, error) {
	cfg := it.Config
	if it.have != nil {
		cfg.AckWait = it.have.AckWait // the services set it from --ack-wait at start
	}
	var now jetstream.ConsumerConfig
	err := jsretry.Do(ctx, func(ctx context.Context) error {
		c, err := js.CreateOrUpdateConsumer(ctx, it.Stream, cfg)
		if err != nil {
			return err
		}
		now = c.CachedInfo().Config
		return nil
	})
	if err != nil {
		return Change{}, fmt.Errorf("provision: %s %s: %w", KindConsumer, it.name(), err)
	}
	return change(KindConsumer, it.name(), it.have, now), nil
}

func change[C jetstream.StreamConfig | jetstream.ConsumerConfig](kind Kind, name string, have *C, now C) Change {
	if have == nil {
		return Change{Kind: kind, Name: name, Action: Created}
	}
	if fields := diff(*have, now); len(fields) > 0 {
		return Change{Kind: kind, Name: name, Action: Updated, Fields: fields}
	}
	return Change{Kind: kind, Name: name, Action: Unchanged}
}
