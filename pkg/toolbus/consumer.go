package toolbus

import (
	"time"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/nats-io/nats.go/jetstream"
)

// DefaultAckWait is a [Worker]'s AckWait when it sets none.
const DefaultAckWait = 30 * time.Second

// ConsumerName is the durable consumer shared by every worker of pool.
func ConsumerName(pool string) string { return "toolrunner_" + pool }

// ConsumerConfig is the durable consumer on CAIRN_TOOLS that every worker of
// pool shares, with the given AckWait. Workers create or update it to this
// at start; `cairn provision --pools` (pkg/provision) creates it with
// [DefaultAckWait] before the first worker starts, so a queue-lag autoscaler
// finds it. Its replicas follow the stream's.
func ConsumerConfig(n events.Names, pool string, ackWait time.Duration) jetstream.ConsumerConfig {
	return jetstream.ConsumerConfig{
		Durable:       ConsumerName(pool),
		Description:   "toolrunners of pool " + pool,
		FilterSubject: n.PoolTools(pool),
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       ackWait,
		MaxDeliver:    -1, // the worker gives up after MaxDeliveries with an error result
		MaxAckPending: 4096,
		MaxWaiting:    4096,
	}
}
