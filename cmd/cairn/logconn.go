package main

import (
	"context"
	"fmt"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/spf13/cobra"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/provision"
	"github.com/cairn-agents/cairn/pkg/session"
)

// logFlags are the flags of the client commands that work on the session
// log: import, export, log, tree, audit verify, replay. They talk to the
// gateway at --server like every client command; --nats makes them work on
// NATS directly instead, for operators and before a gateway exists
// (DESIGN §7). CAIRN_NATS is not read here: going around the gateway is
// asked for on the command line.
type logFlags struct {
	nf     natsFlags
	prefix string
}

func (f *logFlags) add(c *cobra.Command) {
	f.nf.add(c, "", "work on the log on this NATS server directly instead of through the gateway (operators)")
	c.Flags().StringVar(&f.prefix, "prefix", events.DefaultPrefix, "namespace of the streams and buckets (with --nats)")
}

// direct reports whether the command works on NATS, not the gateway.
func (f *logFlags) direct(cmd *cobra.Command) (bool, error) {
	if f.nf.URL == "" {
		for _, flag := range []string{"prefix", "creds", "tls-ca"} {
			if cmd.Flags().Changed(flag) {
				return false, usagef("--%s applies with --nats only; the gateway knows its own", flag)
			}
		}
		return false, nil
	}
	if err := events.ValidatePrefix(f.prefix); err != nil {
		return false, usagef("--prefix: %v", err)
	}
	return true, nil
}

// connect connects to NATS (--nats) as the admin (--creds). The returned
// func closes the connection.
func (f *logFlags) connect() (jetstream.JetStream, func(), error) {
	opts, err := f.nf.options(provision.RoleAdmin, "")
	if err != nil {
		return nil, nil, err
	}
	nc, err := nats.Connect(f.nf.URL, append(opts, nats.Name("cairn cli"))...)
	if err != nil {
		return nil, nil, natsConnectErr(f.nf.URL, err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, nil, err
	}
	return js, nc.Close, nil
}

// open connects to NATS and opens the session log; create says whether a
// missing stream may be created. The returned func closes the connection.
func (f *logFlags) open(ctx context.Context, create bool) (*session.JetStreamLog, func(), error) {
	js, closeConn, err := f.connect()
	if err != nil {
		return nil, nil, err
	}
	l, err := session.NewJetStreamLog(ctx, js, session.WithNames(events.Names{Prefix: f.prefix}), session.WithCreate(create))
	if err != nil {
		closeConn()
		return nil, nil, err
	}
	return l, closeConn, nil
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
	l, closeLog, err := f.open(ctx, false)
	if err != nil {
		return nil, nil, err
	}
	ref, err := parseCLISession(sid)
	if err != nil {
		closeLog()
		return nil, nil, err
	}
	s, err := session.Load(ctx, l, ref)
	if err != nil {
		closeLog()
		return nil, nil, fmt.Errorf("load session %s: %w", sid, err)
	}
	return s, closeLog, nil
}
