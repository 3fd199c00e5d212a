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

// ExtensionsBucket configures the bucket of extension handler
// registrations (docs/extensions.md): one key per handler, the latest
// registration only; orchestrators watch it.
func ExtensionsBucket(n events.Names, replicas int) jetstream.KeyValueConfig {
	return jetstream.KeyValueConfig{Bucket: n.ExtensionsBucket(), History: 1, Replicas: max(1, replicas),
		Description: "Cairn extension handlers by handler name: hook, tenant, priority, timeout, failure policy"}
}
