package provision

import (
	"time"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/nats-io/nats.go/jetstream"
)

// LeasesBucket configures the KV bucket of orchestrator membership and
// partition leases ([events.Names.LeasesBucket]): its keys expire after
// ttl, the lease TTL.
func LeasesBucket(n events.Names, replicas int, ttl time.Duration) jetstream.KeyValueConfig {
	return jetstream.KeyValueConfig{Bucket: n.LeasesBucket(), TTL: ttl, History: 1, Replicas: replicas,
		Description: "Cairn partition leases"}
}

// CheckpointsBucket configures the KV bucket of per-partition command
// checkpoints ([events.Names.CheckpointsBucket]).
func CheckpointsBucket(n events.Names, replicas int) jetstream.KeyValueConfig {
	return jetstream.KeyValueConfig{Bucket: n.CheckpointsBucket(), History: 1, Replicas: replicas,
		Description: "Cairn command checkpoints, one per partition"}
}

// OutcomesBucket configures the bucket of outcomes without a log entry
// ([events.Names.OutcomesBucket], [events.Outcome]): its keys expire after
// maxAge, the commands stream's max age, so an outcome is kept as long as
// the command it answers.
func OutcomesBucket(n events.Names, replicas int, maxAge time.Duration) jetstream.KeyValueConfig {
	return jetstream.KeyValueConfig{Bucket: n.OutcomesBucket(), TTL: maxAge, History: 1, Replicas: replicas,
		Description: "Cairn commands no log entry names (refused without a log, applied with no effect), by <sid>.<command id>"}
}

// OrchestratorBuckets configures the orchestrator's KV buckets: leases,
// checkpoints and outcomes. On a cluster they need the same replicas as the
// streams: an R1 bucket on a lost node stalls every orchestrator. The
// orchestrator keeps the replicas it finds when it adjusts the leases
// bucket's TTL at start.
func OrchestratorBuckets(n events.Names, replicas int, leaseTTL time.Duration) []jetstream.KeyValueConfig {
	return []jetstream.KeyValueConfig{
		LeasesBucket(n, replicas, leaseTTL),
		CheckpointsBucket(n, replicas),
		OutcomesBucket(n, replicas, CommandsMaxAge),
	}
}
