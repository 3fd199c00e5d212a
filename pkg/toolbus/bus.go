package toolbus

import (
	"errors"
	"io"
	"log/slog"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Bus is one process's handle on the tool protocol over a NATS connection.
type Bus struct {
	nc    *nats.Conn
	js    jetstream.JetStream
	names events.Names
	log   *slog.Logger
}

// Option configures a [Bus].
type Option func(*Bus) error

// WithLogger sets the logger (default: discard).
func WithLogger(l *slog.Logger) Option {
	return func(b *Bus) error {
		if l == nil {
			return errors.New("toolbus: WithLogger: logger is nil")
		}
		b.log = l
		return nil
	}
}

// New returns a Bus over nc using names for every stream, subject and bucket.
// It does not provision anything; see [Provision].
func New(nc *nats.Conn, names events.Names, opts ...Option) (*Bus, error) {
	if nc == nil {
		return nil, errors.New("toolbus: New: connection is nil")
	}
	if names.Prefix != "" {
		if err := events.ValidatePrefix(names.Prefix); err != nil {
			return nil, err
		}
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, err
	}
	b := &Bus{nc: nc, js: js, names: names, log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	for _, o := range opts {
		if err := o(b); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// JetStream returns the JetStream context the bus uses.
func (b *Bus) JetStream() jetstream.JetStream { return b.js }

// Names returns the names the bus uses.
func (b *Bus) Names() events.Names { return b.names }

// CallMsgID is the Nats-Msg-Id of the call toolCallID of session r. Tool
// call ids are only unique within a session, so the session (tenant and
// id) scopes them: call.<tenant>.<sid>.<toolCallID>.
func CallMsgID(r events.SessionRef, toolCallID string) string {
	return "call." + r.String() + "." + toolCallID
}

// ResultMsgID is the Nats-Msg-Id of the result of call toolCallID of session
// r: derived from the call, so a result published twice is stored once.
func ResultMsgID(r events.SessionRef, toolCallID string) string {
	return "result." + r.String() + "." + toolCallID
}

// startKey is the key of a call's start record in the cairn_toolstarts
// bucket: <tenant>.<sid>.<digest of the call>.
func startKey(r events.SessionRef, toolCallID string) string {
	return r.String() + "." + events.DeriveID("toolstart", r.String(), toolCallID)
}
