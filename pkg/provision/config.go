package provision

import (
	"fmt"
	"slices"
	"time"

	"github.com/cairn-agents/cairn/pkg/events"
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
	// Partitions of CAIRN_COMMANDS, 1-4096 (the orchestrators' --partitions
	// must match); default [DefaultPartitions]. Fixed once the stream exists.
	Partitions int
	// Migrate moves an installation of the layout before tenants to the
	// tenant layout: its sessions are copied to the default tenant and
	// CAIRN_COMMANDS gets the two-token transform (see [ErrLegacyLayout]).
	// Without it Apply refuses such an installation. On one already
	// migrated, or new, it changes nothing more than Apply does.
	Migrate bool
}

func (o Options) withDefaults() (Options, error) {
	if o.Replicas == 0 {
		o.Replicas = 1
	}
	if o.Replicas < 1 || o.Replicas > 5 {
		return o, &events.FieldError{Field: "replicas", Problem: fmt.Sprintf("must be 1-5, got %d", o.Replicas)}
	}
	if o.Partitions == 0 {
		o.Partitions = DefaultPartitions
	}
	if o.Partitions < 1 || o.Partitions > 4096 {
		return o, &events.FieldError{Field: "partitions", Problem: fmt.Sprintf("must be 1-4096, got %d", o.Partitions)}
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
// and its object stores (pkg/session), the commands stream, the tool
// protocol (pkg/toolbus), the compaction queue (pkg/compactbus), the
// orchestrator's buckets, the budget buckets (pkg/budget), the gateway's
// API keys bucket, the extensions bucket, and
// the shared consumers of the compactors and of
// each pool's toolrunners. The services that create a missing object at
// start create it from the same function of this package, with their own
// replicas.
func Config(n events.Names, opts Options) (Set, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return Set{}, err
	}
	tb := ToolOptions{Replicas: o.Replicas}
	var s Set
	s.Streams = append(s.Streams,
		SessionsStream(n, o.Replicas),
		CommandsStream(n, o.Partitions, o.Replicas, CommandsMaxAge))
	s.Streams = append(s.Streams, ToolStreams(n, tb)...)
	s.Streams = append(s.Streams, CompactionsStream(n, o.Replicas))
	s.KeyValues = append(ToolBuckets(n, tb), OrchestratorBuckets(n, o.Replicas, DefaultLeaseTTL)...)
	s.ObjectStores = []jetstream.ObjectStoreConfig{BlobsStore(n, o.Replicas), SnapshotsStore(n, o.Replicas)}
	s.KeyValues = append(s.KeyValues, BudgetBuckets(n, o.Replicas)...)
	s.KeyValues = append(s.KeyValues, KeysBucket(n, o.Replicas), ResourcesBucket(n, o.Replicas), ExtensionsBucket(n, o.Replicas))
	s.Consumers = append(s.Consumers, Consumer{Stream: n.CompactionsStream(), Config: CompactorConsumer(n, DefaultCompactorAckWait)})
	for _, p := range o.Pools {
		s.Consumers = append(s.Consumers, Consumer{Stream: n.ToolsStream(), Config: ToolPoolConsumer(n, p, DefaultToolAckWait)})
	}
	return s, nil
}

// BudgetUseMaxAge is how long a key of the budget use bucket outlives its
// last write: long enough for a day's key to be read after the day ends.
const BudgetUseMaxAge = 72 * time.Hour

// BudgetBuckets are pkg/budget's buckets: the tenants' limits and their use.
func BudgetBuckets(n events.Names, replicas int) []jetstream.KeyValueConfig {
	replicas = max(1, replicas)
	return []jetstream.KeyValueConfig{
		{Bucket: n.BudgetsBucket(), History: 1, Replicas: replicas, Description: "Cairn tenant budgets: limits.<tenant>"},
		{Bucket: n.BudgetUseBucket(), History: 1, TTL: BudgetUseMaxAge, Replicas: replicas,
			Description: "Cairn budget use: day.<tenant>.<YYYY-MM-DD> (settled use, reservations), runs.<tenant> (run slots)"},
	}
}
