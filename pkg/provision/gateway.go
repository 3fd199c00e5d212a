package provision

import (
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/nats-io/nats.go/jetstream"
)

// KeysBucketName is the KV bucket of the gateway's API keys: one key per
// API key id, its value the key's record (role, tenant, SHA-256 of the
// secret, never the secret). Every gateway watches it, so a key created or
// revoked on one gateway holds on all of them within moments.
func KeysBucketName(n events.Names) string { return prefix(n) + "_keys" }

// KeysBucket configures the API keys bucket. A revoked key keeps its record
// (marked revoked), so a bootstrap key cannot come back by a restart; the
// history of one record is kept for audit.
func KeysBucket(n events.Names, replicas int) jetstream.KeyValueConfig {
	return jetstream.KeyValueConfig{Bucket: KeysBucketName(n), History: 5, Replicas: replicas,
		Description: "Cairn gateway API keys by key id: role, tenant and the secret's SHA-256, never the secret"}
}
