package provision

import (
	"time"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/nats-io/nats.go/jetstream"
)

// LeasesBucket is the KV bucket of orchestrator membership and partition
// leases (keys expire after the lease TTL).
func LeasesBucket(n events.Names) string { return prefix(n) + "_leases" }

// CheckpointsBucket is the KV bucket of per-partition command checkpoints.
func CheckpointsBucket(n events.Names) string { return prefix(n) + "_checkpoints" }

// NoEffectKey is the key, in the checkpoints bucket, recording that the
// orchestrator consumed command commandID of session sid without writing
// any entry (a navigation to the active leaf, which writes nothing, as in
// pi): no entry names such a command, so the log alone cannot say it was
// applied. The gateway reads it to report the command applied.
func NoEffectKey(sid, commandID string) string { return "noop." + sid + "." + commandID }

// OrchestratorBuckets configures the orchestrator's two KV buckets. On a
// cluster they need the same replicas as the streams: an R1 bucket on a lost
// node stalls every orchestrator. The orchestrator keeps the replicas it
// finds when it adjusts the leases bucket's TTL at start.
func OrchestratorBuckets(n events.Names, replicas int, leaseTTL time.Duration) []jetstream.KeyValueConfig {
	return []jetstream.KeyValueConfig{
		{Bucket: LeasesBucket(n), TTL: leaseTTL, History: 1, Replicas: replicas, Description: "Cairn partition leases"},
		{Bucket: CheckpointsBucket(n), History: 1, Replicas: replicas, Description: "Cairn command checkpoints, one per partition"},
	}
}
