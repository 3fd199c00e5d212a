package main

import (
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/spf13/cobra"
)

// defaultNATS is where services and operator commands find NATS unless told.
const defaultNATS = "nats://127.0.0.1:4222"

// addNATSFlag adds --nats (env CAIRN_NATS) to c.
func addNATSFlag(c *cobra.Command) *string {
	return c.Flags().String("nats", envOr("CAIRN_NATS", defaultNATS), "NATS server URL(s), comma separated (env CAIRN_NATS)")
}

// connectNATS connects with reconnects forever, as a service should.
func connectNATS(url, name string) (*nats.Conn, jetstream.JetStream, error) {
	nc, err := nats.Connect(url, nats.Name(name), nats.MaxReconnects(-1), nats.ReconnectWait(time.Second),
		nats.Timeout(5*time.Second))
	if err != nil {
		return nil, nil, fmt.Errorf("connect to NATS at %s: %w", url, err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, nil, fmt.Errorf("jetstream: %w", err)
	}
	return nc, js, nil
}
