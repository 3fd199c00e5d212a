// Package jsretry retries JetStream calls while JetStream cannot answer yet:
// no responder, no reply, or 503, as while a stream or bucket elects its
// leader right after it was created or after a NATS node was lost, or the
// client's connection is down while it reconnects.
//
// # Errors
//
// [Do] returns nil, the first error that is an answer (one that will not
// change when asked again, such as a missing stream), or the last error once
// ctx ends.
package jsretry

import (
	"context"
	"errors"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Unavailable reports whether err says JetStream could not answer for now
// (no responder, no reply, 503 while a stream or bucket elects a leader
// right after it was created or after a node was lost, or the client's
// connection down while it reconnects), as opposed to an answer that will
// not change.
func Unavailable(err error) bool {
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) {
		return apiErr.Code == 503
	}
	return errors.Is(err, nats.ErrNoResponders) || errors.Is(err, jetstream.ErrNoStreamResponse) ||
		errors.Is(err, nats.ErrTimeout) || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, nats.ErrDisconnected) || errors.Is(err, nats.ErrConnectionReconnecting)
}

// Do runs op (at most 5 s per attempt) until it succeeds, fails
// with an answer, or ctx ends, waiting 100 ms to 2 s between attempts.
func Do(ctx context.Context, op func(context.Context) error) error {
	wait := 100 * time.Millisecond
	for {
		actx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := op(actx)
		cancel()
		if err == nil || ctx.Err() != nil || !Unavailable(err) {
			return err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
		wait = min(2*wait, 2*time.Second)
	}
}
