// Package natstest starts real NATS servers with JetStream for tests: one
// embedded server on a random port with its store in a temporary directory
// ([RunServer]), or a cluster of them in one process on loopback whose nodes
// can be killed and restarted ([RunCluster]). [Provision] and
// [RunProvisioned] give a server everything Cairn needs through
// provision.Apply, exactly as production provisions it, so tests cannot
// drift from production; a test that needs a different stream creates it
// by hand and says why. Servers stop when the test ends. Helpers fail the
// test with t.Fatal; they never panic.
package natstest

import (
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Server is a running embedded NATS server with JetStream.
type Server struct {
	*server.Server
	StoreDir string
}

// Option adjusts the server options before it starts.
type Option func(*server.Options)

// RunServer starts a JetStream server on 127.0.0.1 with a random client port
// and stops it (waiting for shutdown) when t ends.
func RunServer(t testing.TB, opts ...Option) *Server {
	t.Helper()
	dir := t.TempDir()
	o := &server.Options{
		ServerName: "test",
		Host:       "127.0.0.1",
		Port:       -1,
		JetStream:  true,
		StoreDir:   dir,
		NoSigs:     true,
		NoLog:      true,
	}
	for _, opt := range opts {
		opt(o)
	}
	s, err := server.NewServer(o)
	if err != nil {
		t.Fatalf("natstest: new server: %v", err)
	}
	s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		s.Shutdown()
		t.Fatal("natstest: server not ready within 10s")
	}
	t.Cleanup(func() {
		s.Shutdown()
		s.WaitForShutdown()
	})
	return &Server{Server: s, StoreDir: dir}
}

// Connect opens a client connection to s, closed when t ends.
func Connect(t testing.TB, s *server.Server, opts ...nats.Option) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(s.ClientURL(), opts...)
	if err != nil {
		t.Fatalf("natstest: connect: %v", err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// JetStream returns a JetStream context over a new connection to s.
func JetStream(t testing.TB, s *server.Server) (*nats.Conn, jetstream.JetStream) {
	t.Helper()
	nc := Connect(t, s)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatalf("natstest: jetstream: %v", err)
	}
	return nc, js
}
