package compactbus

import (
	"context"
	"errors"
	"fmt"
	"github.com/cairn-agents/cairn/pkg/jsretry"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/follow"
)

// resultIter reads one session's results in order through a
// follow.Follower, which keeps reading when the NATS node serving it is lost
// (nats.go's ordered consumer could be recreated on the dead node and wait
// forever; see pkg/follow).
type resultIter struct {
	f    *follow.Follower
	msgs chan jetstream.Msg
	done chan struct{}
}

// results starts reading the results of session sid stored from now on, or
// since since when it is set.
func (c *Client) results(ctx context.Context, sid events.SessionRef, since time.Time) (*resultIter, error) {
	it := &resultIter{msgs: make(chan jetstream.Msg, 64), done: make(chan struct{})}
	// Start's stream look-up gets no answer while JetStream elects a leader
	// (it gives up after its OpenTimeout): try again until ctx ends.
	var f *follow.Follower
	err := jsretry.Do(ctx, func(context.Context) error {
		var err error
		f, err = follow.Start(ctx, c.js, follow.Config{Stream: c.names.ResultsStream(), Filter: c.names.ResultSubject(sid), Since: since},
			func(m jetstream.Msg) {
				select {
				case it.msgs <- m:
				case <-it.done:
				}
			})
		return err
	})
	if err != nil {
		if errors.Is(err, jetstream.ErrStreamNotFound) {
			return nil, fmt.Errorf("%w: stream %s does not exist", ErrNotProvisioned, c.names.ResultsStream())
		}
		return nil, fmt.Errorf("compactbus: results consumer: %w", err)
	}
	it.f = f
	return it, nil
}

// next returns the next result message, or ctx's error.
func (it *resultIter) next(ctx context.Context) (jetstream.Msg, error) {
	select {
	case m := <-it.msgs:
		return m, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Stop stops reading; safe to call more than once.
func (it *resultIter) Stop() {
	select {
	case <-it.done:
		return
	default:
	}
	close(it.done)
	it.f.Stop()
}

// compactorsConsumer looks up the compactors' shared consumer, retrying
// while JetStream cannot answer (a meta leader election after a node is
// lost) until ctx ends.
func (c *Client) compactorsConsumer(ctx context.Context) error {
	return jsretry.Do(ctx, func(ctx context.Context) error {
		_, err := c.js.Consumer(ctx, c.names.CompactionsStream(), c.names.CompactorConsumer())
		return err
	})
}

// publish stores a request, retrying while the stream cannot answer (no
// responder or no reply while NATS elects a leader after a node is lost)
// until ctx ends. The request's message id makes a retry of a request that
// was stored a duplicate, which the caller handles.
func (c *Client) publish(ctx context.Context, msg *nats.Msg) (*jetstream.PubAck, error) {
	var ack *jetstream.PubAck
	err := jsretry.Do(ctx, func(ctx context.Context) error {
		var err error
		ack, err = c.js.PublishMsg(ctx, msg)
		return err
	})
	return ack, err
}
