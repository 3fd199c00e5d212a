package session

import (
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cairn-agents/cairn/pkg/events"
)

// StreamConfig is the configuration of the session log's stream
// (CAIRN_SESSIONS under the default prefix) with the given replicas.
// [NewJetStreamLog] creates it so when it is missing; `cairn provision`
// (pkg/provision) creates or updates it to exactly this.
func StreamConfig(n events.Names, replicas int) jetstream.StreamConfig {
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

// BlobsConfig is the object store of large entry parts (cairn_blobs).
func BlobsConfig(n events.Names, replicas int) jetstream.ObjectStoreConfig {
	return jetstream.ObjectStoreConfig{
		Bucket: n.BlobsBucket(), Storage: jetstream.FileStorage, Replicas: replicas,
		Description: "large parts of session entries, by digest",
	}
}

// SnapshotsConfig is the object store of cold-load snapshots
// (cairn_snapshots).
func SnapshotsConfig(n events.Names, replicas int) jetstream.ObjectStoreConfig {
	return jetstream.ObjectStoreConfig{
		Bucket: snapshotsBucket(n), Storage: jetstream.FileStorage, Replicas: replicas,
		Description: "per-session snapshots of the session log for fast cold loads",
	}
}
