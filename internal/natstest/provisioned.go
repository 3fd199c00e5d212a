package natstest

import (
	"context"
	"testing"
	"time"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/provision"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Provision applies [provision.Apply] under names with opts on the server
// js talks to, exactly as `cairn provision` and `cairn up` do, so a test
// runs against the streams, buckets and consumers production has. It fails
// the test if Apply fails or takes more than a minute.
func Provision(t testing.TB, js jetstream.JetStream, names events.Names, opts provision.Options) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if report, err := provision.Apply(ctx, js, names, opts); err != nil {
		t.Fatalf("natstest: provision: %v (provisioned before: %v)", err, report)
	}
}

// RunProvisioned starts a server like [RunServer], provisions it like
// [Provision], and returns it with a JetStream context over a new
// connection (closed when t ends).
func RunProvisioned(t testing.TB, names events.Names, opts provision.Options, serverOpts ...Option) (*Server, *nats.Conn, jetstream.JetStream) {
	t.Helper()
	s := RunServer(t, serverOpts...)
	nc, js := JetStream(t, s.Server)
	Provision(t, js, names, opts)
	return s, nc, js
}
