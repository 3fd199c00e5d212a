package telemetrytest

import (
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

func jetstreamOf(nc *nats.Conn) (jetstream.JetStream, error) { return jetstream.New(nc) }
