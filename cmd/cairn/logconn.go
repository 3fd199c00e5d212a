package main

import (
	"context"
	"fmt"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/spf13/cobra"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/session"
)

// logFlags are the flags of the commands that work on the session log
// directly: import, export, log, tree, audit verify.
type logFlags struct {
	nats   string
	prefix string
}

func (f *logFlags) add(c *cobra.Command) {
	c.Flags().StringVar(&f.nats, "nats", envOr("CAIRN_NATS", ""), "NATS server URL to work on the log directly (env CAIRN_NATS)")
	c.Flags().StringVar(&f.prefix, "prefix", events.DefaultPrefix, "namespace of the streams and buckets")
}

// open connects to NATS and opens the session log; create says whether a
// missing stream may be created. The returned func closes the connection.
func (f *logFlags) open(ctx context.Context, create bool) (*session.JetStreamLog, func(), error) {
	if f.nats == "" {
		return nil, nil, usagef("--nats URL is required: the gateway client for this command is not built yet")
	}
	if err := events.ValidatePrefix(f.prefix); err != nil {
		return nil, nil, usagef("--prefix: %v", err)
	}
	nc, err := nats.Connect(f.nats, nats.Name("cairn cli"))
	if err != nil {
		return nil, nil, fmt.Errorf("connect to %s: %w", f.nats, err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, nil, err
	}
	l, err := session.NewJetStreamLog(ctx, js, session.WithNames(events.Names{Prefix: f.prefix}), session.WithCreate(create))
	if err != nil {
		nc.Close()
		return nil, nil, err
	}
	return l, nc.Close, nil
}

// sessionArg validates a session id given on the command line.
func sessionArg(id string) error {
	if err := events.ValidateSessionID(id); err != nil {
		return usagef("session %v", err)
	}
	return nil
}

// load opens the log and loads session sid (validated as a command-line
// argument), saying clearly when it does not exist. The returned func closes
// the connection.
func (f *logFlags) load(ctx context.Context, sid string) (*session.Session, func(), error) {
	if err := sessionArg(sid); err != nil {
		return nil, nil, err
	}
	l, closeLog, err := f.open(ctx, false)
	if err != nil {
		return nil, nil, err
	}
	s, err := session.Load(ctx, l, sid)
	if err != nil {
		closeLog()
		return nil, nil, fmt.Errorf("load session %s: %w", sid, err)
	}
	return s, closeLog, nil
}
