package provision

import (
	"fmt"
	"slices"
	"time"

	"github.com/cairn-agents/cairn/pkg/compactbus"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/session"
	"github.com/cairn-agents/cairn/pkg/toolbus"
	"github.com/nats-io/nats.go/jetstream"
)

// CommandsMaxAge is how long CAIRN_COMMANDS keeps a command.
const CommandsMaxAge = 30 * 24 * time.Hour

// DefaultLeaseTTL is the leases bucket's TTL when [Apply] creates it (the
// orchestrator's default lease TTL; each orchestrator sets its own at start).
const DefaultLeaseTTL = 5 * time.Second

// DefaultPool is the toolrunner pool whose consumer [Apply] creates when
// [Options] names none.
const DefaultPool = "default"

// Options shape what [Apply] provisions. The zero value is a single node
// with the default pool.
type Options struct {
	// Replicas of every stream and bucket, 1-5; default 1 (3 on a
	// three-node cluster). Consumers follow their stream's replicas.
	Replicas int
	// Pools are the toolrunner pools whose durable consumers on CAIRN_TOOLS
	// are created; default [DefaultPool].
	Pools []string
}

func (o Options) withDefaults() (Options, error) {
	if o.Replicas == 0 {
		o.Replicas = 1
	}
	if o.Replicas < 1 || o.Replicas > 5 {
		return o, &events.FieldError{Field: "replicas", Problem: fmt.Sprintf("must be 1-5, got %d", o.Replicas)}
	}
	if len(o.Pools) == 0 {
		o.Pools = []string{DefaultPool}
	}
	var pools []string
	for _, p := range o.Pools {
		if err := events.ValidateToolName("pools", p); err != nil {
			return o, &events.FieldError{Field: "pools", Problem: fmt.Sprintf("pool name %q: 1-64 characters of A-Z a-z 0-9 _ - expected", p)}
		}
		if !slices.Contains(pools, p) {
			pools = append(pools, p)
		}
	}
	o.Pools = pools
	return o, nil
}

// Set is every stream, KV bucket, object store and durable consumer Cairn
// uses, each with the configuration Cairn gives it.
type Set struct {
	Streams      []jetstream.StreamConfig
	KeyValues    []jetstream.KeyValueConfig
	ObjectStores []jetstream.ObjectStoreConfig
	Consumers    []Consumer
}

// Consumer is a durable consumer on Stream.
type Consumer struct {
	Stream string
	Config jetstream.ConsumerConfig
}

// Config returns what Cairn needs under names with opts: the session log
// (pkg/session), the commands stream, the tool protocol (pkg/toolbus), the
// compaction queue (pkg/compactbus), the orchestrator's buckets, the
// gateway's API keys bucket, and the shared consumers of the compactors and of each pool's toolrunners. The
// configurations are the ones the services create when something is
// missing, with opts.Replicas.
func Config(n events.Names, opts Options) (Set, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return Set{}, err
	}
	tb := toolbus.ProvisionOptions{Replicas: o.Replicas}
	var s Set
	s.Streams = append(s.Streams,
		session.StreamConfig(n, o.Replicas),
		CommandsStream(n, DefaultPartitions, o.Replicas, CommandsMaxAge))
	s.Streams = append(s.Streams, toolbus.StreamConfigs(n, tb)...)
	s.Streams = append(s.Streams, compactbus.StreamConfig(n, o.Replicas))
	s.KeyValues = append(toolbus.BucketConfigs(n, tb), OrchestratorBuckets(n, o.Replicas, DefaultLeaseTTL)...)
	s.KeyValues = append(s.KeyValues, KeysBucket(n, o.Replicas))
	s.ObjectStores = []jetstream.ObjectStoreConfig{session.BlobsConfig(n, o.Replicas), session.SnapshotsConfig(n, o.Replicas)}
	s.Consumers = append(s.Consumers, Consumer{Stream: n.CompactionsStream(), Config: compactbus.ConsumerConfig(n, compactbus.DefaultAckWait)})
	for _, p := range o.Pools {
		s.Consumers = append(s.Consumers, Consumer{Stream: n.ToolsStream(), Config: toolbus.ConsumerConfig(n, p, toolbus.DefaultAckWait)})
	}
	return s, nil
}
