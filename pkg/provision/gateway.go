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

// ResourcesHistory is how many versions of one skill or template the
// resources bucket keeps: a run's entries name the version they used, and
// an audit can read it back while it is among the last ResourcesHistory.
const ResourcesHistory = 16

// ResourcesBucket configures the bucket of tenants' skills and prompt
// templates. Values are at most 128 KiB (pkg/resources.MaxSize).
func ResourcesBucket(n events.Names, replicas int) jetstream.KeyValueConfig {
	return jetstream.KeyValueConfig{Bucket: n.ResourcesBucket(), History: ResourcesHistory, Replicas: max(1, replicas),
		MaxValueSize: 256 << 10,
		Description:  "Cairn skills and prompt templates: <tenant>.<skill|template>.<name>, the text as stored"}
}

// ExtensionsBucket configures the bucket of extension handler
// registrations (docs/extensions.md): one key per handler, the latest
// registration only; orchestrators watch it.
func ExtensionsBucket(n events.Names, replicas int) jetstream.KeyValueConfig {
	return jetstream.KeyValueConfig{Bucket: n.ExtensionsBucket(), History: 1, Replicas: max(1, replicas),
		Description: "Cairn extension handlers by handler name: hook, tenant, priority, timeout, failure policy"}
}
