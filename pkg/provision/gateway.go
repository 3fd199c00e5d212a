package provision

import (
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/nats-io/nats.go/jetstream"
)

// KeysBucket configures the API keys bucket. A revoked key keeps its record
// (marked revoked), so a bootstrap key cannot come back by a restart; the
// history of one record is kept for audit.
func KeysBucket(n events.Names, replicas int) jetstream.KeyValueConfig {
	return jetstream.KeyValueConfig{Bucket: n.KeysBucket(), History: 5, Replicas: replicas,
		Description: "Cairn gateway API keys by key id: role, tenant and the secret's SHA-256, never the secret"}
}
