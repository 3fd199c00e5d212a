package provision

import (
	"time"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/nats-io/nats.go/jetstream"
)

// SessionsStream is the session log's stream (CAIRN_SESSIONS under the
// default prefix) with the given replicas. pkg/session creates it so when
// it is missing.
func SessionsStream(n events.Names, replicas int) jetstream.StreamConfig {
	return jetstream.StreamConfig{
		Name:              n.SessionsStream(),
		Subjects:          []string{n.AllSessions()},
		Retention:         jetstream.LimitsPolicy,
		Storage:           jetstream.FileStorage,
		Replicas:          replicas,
		AllowDirect:       true,
		MaxMsgsPerSubject: -1,
		Duplicates:        2 * time.Minute,
	}
}

// BlobsStore is the object store of large entry parts (cairn_blobs).
func BlobsStore(n events.Names, replicas int) jetstream.ObjectStoreConfig {
	return jetstream.ObjectStoreConfig{
		Bucket: n.BlobsBucket(), Storage: jetstream.FileStorage, Replicas: replicas,
		Description: "large parts of session entries, by digest",
	}
}

// SnapshotsStore is the object store of cold-load snapshots
// (cairn_snapshots).
func SnapshotsStore(n events.Names, replicas int) jetstream.ObjectStoreConfig {
	return jetstream.ObjectStoreConfig{
		Bucket: n.SnapshotsBucket(), Storage: jetstream.FileStorage, Replicas: replicas,
		Description: "per-session snapshots of the session log for fast cold loads",
	}
}

// ToolOptions shape the streams and buckets of the tool protocol
// ([ToolStreams], [ToolBuckets]). The zero value is a single-node setup
// with the defaults below.
type ToolOptions struct {
	Replicas int // stream and bucket replicas; default 1 (use 3 on a cluster)
	// ResultsMaxAge bounds how long a result waits in CAIRN_RESULTS for its
	// session's owner; default 7 days.
	ResultsMaxAge time.Duration
	// Duplicates is the dedup window of CAIRN_TOOLS and CAIRN_RESULTS; it must
	// exceed the consumers' AckWait; default 10 minutes.
	Duplicates time.Duration
	// EventsMaxAge is the max age of CAIRN_EVENTS; default 1 hour.
	EventsMaxAge time.Duration
	// StartsTTL is how long a call's start record lives; default 24 hours.
	StartsTTL time.Duration
}

func (o ToolOptions) withDefaults() ToolOptions {
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

// ToolStreams are the streams of the tool protocol: CAIRN_TOOLS,
// CAIRN_RESULTS and CAIRN_EVENTS under the default prefix (zero options
// mean their defaults). pkg/toolbus creates each missing one so.
func ToolStreams(n events.Names, opts ToolOptions) []jetstream.StreamConfig {
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

// ToolBuckets are the KV buckets of the tool protocol: cairn_tools and
// cairn_toolstarts under the default prefix, like [ToolStreams].
func ToolBuckets(n events.Names, opts ToolOptions) []jetstream.KeyValueConfig {
	o := opts.withDefaults()
	return []jetstream.KeyValueConfig{
		{Bucket: n.ToolsBucket(), History: 1, Replicas: o.Replicas, Storage: jetstream.FileStorage,
			Description: "Cairn tool registry: one key per tool name"},
		{Bucket: n.ToolStartsBucket(), History: 1, Replicas: o.Replicas, Storage: jetstream.FileStorage,
			TTL: o.StartsTTL, Description: "Cairn tool call starts, keyed by session and tool call id"},
	}
}

// CompactionsStream is CAIRN_COMPACTIONS: a work queue of compaction and
// branch summary requests. pkg/compactbus creates it so when it is missing.
func CompactionsStream(n events.Names, replicas int) jetstream.StreamConfig {
	return jetstream.StreamConfig{Name: n.CompactionsStream(), Subjects: []string{n.AllCompactions()},
		Retention: jetstream.WorkQueuePolicy, Storage: jetstream.FileStorage, Replicas: max(replicas, 1),
		Duplicates: 10 * time.Minute, MaxAge: 24 * time.Hour,
		Description: "Cairn compaction and branch summary requests waiting for a compactor"}
}

// DefaultToolAckWait is the AckWait of a pool's shared consumer unless its
// toolrunners set their own.
const DefaultToolAckWait = 30 * time.Second

// DefaultCompactorAckWait is the AckWait of the compactors' shared consumer
// unless a compactor sets its own.
const DefaultCompactorAckWait = 30 * time.Second

// ToolPoolConsumer is the durable consumer on CAIRN_TOOLS that every worker
// of pool shares ([events.Names.ToolPoolConsumer]), with the given AckWait.
// Workers (pkg/toolbus) create or update it to this at start; [Apply]
// creates it with [DefaultToolAckWait] before the first worker starts, so
// a queue-lag autoscaler finds it. Its replicas follow the stream's.
func ToolPoolConsumer(n events.Names, pool string, ackWait time.Duration) jetstream.ConsumerConfig {
	return jetstream.ConsumerConfig{
		Durable:       n.ToolPoolConsumer(pool),
		Description:   "toolrunners of pool " + pool,
		FilterSubject: n.PoolTools(pool),
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       ackWait,
		MaxDeliver:    -1, // the worker gives up after MaxDeliveries with an error result
		MaxAckPending: 4096,
		MaxWaiting:    4096,
	}
}

// CompactorConsumer is the durable consumer every compactor shares on
// CAIRN_COMPACTIONS ([events.Names.CompactorConsumer]), with the given
// AckWait. Compactors create or update it to this at start; [Apply]
// creates it with [DefaultCompactorAckWait] before the first compactor
// starts. Its replicas follow the stream's.
func CompactorConsumer(n events.Names, ackWait time.Duration) jetstream.ConsumerConfig {
	return jetstream.ConsumerConfig{Durable: n.CompactorConsumer(), FilterSubject: n.AllCompactions(),
		AckPolicy: jetstream.AckExplicitPolicy, AckWait: ackWait, MaxDeliver: -1,
		MaxAckPending: 10000, Description: "Cairn compactors"}
}
