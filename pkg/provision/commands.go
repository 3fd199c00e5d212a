package provision

import (
	"time"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/nats-io/nats.go/jetstream"
)

// DefaultPartitions is the number of partitions sessions are spread over for
// ownership. It is fixed when the streams are created.
const DefaultPartitions = 32

// CommandsStream configures CAIRN_COMMANDS. Clients publish on
// cairn.cmd.<tenant>.<sid>; the stream stores each command as cairn.cmd.<p>.<tenant>.<sid>,
// where p is the session's partition computed by the server
// ({{partition(n,1,2)}}: tenant and id together), so the owner of a partition reads exactly its
// sessions' commands in order with one filtered consumer.
func CommandsStream(n events.Names, partitions, replicas int, maxAge time.Duration) jetstream.StreamConfig {
	return jetstream.StreamConfig{
		Name:        n.CommandsStream(),
		Description: "Cairn client commands, stored by partition",
		Subjects:    []string{n.AllCommands()},
		SubjectTransform: &jetstream.SubjectTransformConfig{
			Source:      n.AllCommands(),
			Destination: n.StoredCommands(partitions),
		},
		Retention:   jetstream.LimitsPolicy,
		Storage:     jetstream.FileStorage,
		MaxAge:      maxAge,
		Replicas:    replicas,
		AllowDirect: true,
		Duplicates:  2 * time.Minute,
	}
}
