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
// # Authentication
//
// With [Config.Users] set, every connection must authenticate as one of
// them (an nkey user; `cairn up` generates their seeds, pkg/provision) and
// may publish and subscribe only where its permissions say; the server
// refuses a connection without credentials or with an unknown key, and
// answers a forbidden publish or subscribe with a permissions violation
// (logged through [Config.Logger]). Without Users the server is open:
// tests only.
//
// # Concurrency
//
// A Server is safe for concurrent use; Shutdown waits until the server has
// stopped.
package embednats

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"
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
	// Users are the only identities that may connect; default none, which
	// leaves the server open (tests only).
	Users []User
	// Logger receives the server's errors and warnings (refused
	// connections, permission violations); default none.
	Logger *slog.Logger
}

// User is an nkey user of the server: its public key and what it may
// publish and subscribe to. Nil lists allow everything (the admin).
type User struct {
	Name      string // for the log
	Nkey      string // public key, U...
	Publish   []string
	Subscribe []string
	// Responses lets the user publish one reply to each request it
	// received (NATS allow_responses).
	Responses bool
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
	for _, u := range cfg.Users {
		if !nkeys.IsValidPublicUserKey(u.Nkey) {
			return nil, fmt.Errorf("embednats: user %q: %q is not an nkey user public key", u.Name, u.Nkey)
		}
		nu := &server.NkeyUser{Nkey: u.Nkey}
		if u.Publish != nil || u.Subscribe != nil {
			nu.Permissions = &server.Permissions{Publish: &server.SubjectPermission{Allow: u.Publish},
				Subscribe: &server.SubjectPermission{Allow: u.Subscribe}}
			if u.Responses {
				nu.Permissions.Response = &server.ResponsePermission{MaxMsgs: 1, Expires: time.Minute}
			}
		}
		opts.Nkeys = append(opts.Nkeys, nu)
	}
	if cfg.Logger != nil {
		opts.NoLog = false
	}
	srv, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("embednats: %w", err)
	}
	if cfg.Logger != nil {
		srv.SetLoggerV2(logger{cfg.Logger}, false, false, false)
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

// logger forwards the server's errors and warnings to slog; notices and
// debug lines are dropped.
type logger struct{ log *slog.Logger }

func (l logger) Noticef(string, ...any) {}
func (l logger) Debugf(string, ...any)  {}
func (l logger) Tracef(string, ...any)  {}
func (l logger) Warnf(format string, v ...any) {
	l.log.Warn("nats server: " + fmt.Sprintf(format, v...))
}
func (l logger) Errorf(format string, v ...any) {
	l.log.Error("nats server: " + fmt.Sprintf(format, v...))
}
func (l logger) Fatalf(format string, v ...any) {
	l.log.Error("nats server: fatal: " + fmt.Sprintf(format, v...))
}
