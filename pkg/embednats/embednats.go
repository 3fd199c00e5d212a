// Package embednats runs a NATS server with JetStream inside the calling
// process, for `cairn up` and `cairn run`: the same streams and subjects as a
// cluster, with no process to manage.
//
// # Durability
//
// JetStream stores its data under the given directory. By default the store
// is fsynced every two minutes, so acknowledged writes survive a killed
// process but not a lost machine; SyncAlways fsyncs every write (about ten
// times slower here). Production durability is R3 on a cluster.
//
// # Concurrency
//
// A Server is safe for concurrent use; Shutdown waits until the server has
// stopped.
package embednats

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// Config configures an embedded server.
type Config struct {
	// DataDir is where JetStream keeps its store (DataDir/jetstream). Required.
	DataDir string
	// Listen is the client address, host:port; "127.0.0.1:0" picks a free
	// port. Default "127.0.0.1:4222". Other processes (toolrunners, the CLI)
	// connect here.
	Listen string
	// SyncAlways fsyncs every write.
	SyncAlways bool
	// MaxPayload bounds one message; default 8 MiB.
	MaxPayload int32
}

// Server is a running embedded NATS server.
type Server struct {
	srv *server.Server
}

// Start starts the server and waits until it accepts connections.
func Start(cfg Config) (*Server, error) {
	if cfg.DataDir == "" {
		return nil, errors.New("embednats: DataDir is required")
	}
	if cfg.Listen == "" {
		cfg.Listen = "127.0.0.1:4222"
	}
	host, portStr, err := net.SplitHostPort(cfg.Listen)
	if err != nil {
		return nil, fmt.Errorf("embednats: listen address %q: %w", cfg.Listen, err)
	}
	port, err := strconv.Atoi(portStr)
	if err != nil || port < 0 || port > 65535 {
		return nil, fmt.Errorf("embednats: listen address %q: port must be 0-65535", cfg.Listen)
	}
	if port == 0 {
		port = server.RANDOM_PORT
	}
	if cfg.MaxPayload == 0 {
		cfg.MaxPayload = 8 << 20
	}
	store := filepath.Join(cfg.DataDir, "jetstream")
	if err := os.MkdirAll(store, 0o750); err != nil {
		return nil, fmt.Errorf("embednats: %w", err)
	}
	opts := &server.Options{
		ServerName:         "cairn-embedded",
		Host:               host,
		Port:               port,
		JetStream:          true,
		StoreDir:           store,
		SyncAlways:         cfg.SyncAlways,
		MaxPayload:         cfg.MaxPayload,
		NoSigs:             true,
		NoLog:              true,
		JetStreamMaxMemory: 1 << 30,
	}
	srv, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("embednats: %w", err)
	}
	srv.Start()
	if !srv.ReadyForConnections(30 * time.Second) {
		srv.Shutdown()
		return nil, errors.New("embednats: server did not become ready within 30s (is the port in use?)")
	}
	return &Server{srv: srv}, nil
}

// ClientURL is the URL other processes connect to.
func (s *Server) ClientURL() string { return s.srv.ClientURL() }

// Connect opens a client connection over the in-process transport.
func (s *Server) Connect(opts ...nats.Option) (*nats.Conn, error) {
	opts = append([]nats.Option{nats.InProcessServer(s.srv), nats.Name("cairn-embedded")}, opts...)
	return nats.Connect(s.srv.ClientURL(), opts...)
}

// Shutdown stops the server and waits for it.
func (s *Server) Shutdown() {
	s.srv.Shutdown()
	s.srv.WaitForShutdown()
}
