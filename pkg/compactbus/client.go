package compactbus

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/telemetry"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Lookback is how far back in CAIRN_RESULTS a client looks for the result
// of a request whose publish was a duplicate (asked again after the owner
// restarted: it may have been answered already). It exceeds the
// CAIRN_COMPACTIONS duplicate window.
const Lookback = 15 * time.Minute

// ErrNoCompactor says no compactor has ever started on the platform (its
// shared consumer does not exist), so a request would wait for nobody.
var ErrNoCompactor = errors.New("compactbus: no compactor is running (start cairn compactor)")

// RemoteError is a worker's failure to write a summary.
type RemoteError struct {
	Worker  string
	Message string
}

func (e *RemoteError) Error() string {
	return fmt.Sprintf("compactor %s: %s", e.Worker, e.Message)
}

// Client asks compactor workers for summaries.
type Client struct {
	nc    *nats.Conn
	js    jetstream.JetStream
	names events.Names
}

// New returns a client over nc.
func New(nc *nats.Conn, names events.Names) (*Client, error) {
	if nc == nil {
		return nil, errors.New("compactbus: a NATS connection is required")
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("compactbus: %w", err)
	}
	return &Client{nc: nc, js: js, names: names}, nil
}

// Summarize publishes req and waits for its result until ctx ends (give it
// a deadline: no compactor running means no answer).
//
// A request larger than the server's max payload loses the oldest part of
// its transcript (a note says how much), so that it can be sent at all.
func (c *Client) Summarize(ctx context.Context, req Request) (Result, error) {
	data, err := req.Encode()
	if err != nil {
		return Result{}, err
	}
	if limit := c.nc.MaxPayload() - 4096; int64(len(data)) > limit && limit > 0 {
		over := int(int64(len(data)) - limit)
		if over >= len(req.Job.Transcript) {
			return Result{}, fmt.Errorf("compactbus: request of %d bytes is over the server's max payload %d even without its transcript", len(data), c.nc.MaxPayload())
		}
		cut := over + 64
		for cut < len(req.Job.Transcript) && req.Job.Transcript[cut]&0xC0 == 0x80 {
			cut++ // not inside a UTF-8 sequence
		}
		req.Job.Transcript = fmt.Sprintf("[... the oldest %d characters of the transcript were left out]\n", cut) + req.Job.Transcript[cut:]
		if data, err = req.Encode(); err != nil {
			return Result{}, err
		}
	}
	if err := c.compactorsConsumer(ctx); err != nil {
		switch {
		case errors.Is(err, jetstream.ErrConsumerNotFound):
			return Result{}, ErrNoCompactor
		case errors.Is(err, jetstream.ErrStreamNotFound):
			return Result{}, fmt.Errorf("%w: stream %s does not exist", ErrNotProvisioned, c.names.CompactionsStream())
		}
		return Result{}, fmt.Errorf("compactbus: look up the compactors' consumer: %w", err)
	}
	// Listen before publishing, so a fresh result is not missed.
	it, err := c.results(ctx, req.Session(), time.Time{})
	if err != nil {
		return Result{}, err
	}
	defer func() { it.Stop() }()
	msg := nats.NewMsg(c.names.CompactionSubject(req.Session()))
	msg.Data = data
	msg.Header.Set(jetstream.MsgIDHeader, "req-"+req.RequestID)
	telemetry.Inject(ctx, msg.Header) // the compactor continues the caller's trace
	ack, err := c.publish(ctx, msg)
	if err != nil {
		if errors.Is(err, jetstream.ErrNoStreamResponse) {
			return Result{}, fmt.Errorf("%w: no stream takes %s", ErrNotProvisioned, msg.Subject)
		}
		return Result{}, fmt.Errorf("compactbus: publish request: %w", err)
	}
	if ack.Duplicate {
		// Asked before (an owner that restarted): the answer may be stored
		// already. Read back from Lookback ago, which covers the duplicate
		// window and so the first request's result.
		it.Stop()
		it, err = c.results(ctx, req.Session(), time.Now().Add(-Lookback))
		if err != nil {
			return Result{}, err
		}
	}
	for {
		m, err := it.next(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return Result{}, ctx.Err()
			}
			return Result{}, fmt.Errorf("compactbus: read results: %w", err)
		}
		r, err := DecodeResult(m.Data())
		if err != nil || r.RequestID != req.RequestID {
			continue // a tool result, or another request's
		}
		if r.Error != "" {
			return r, &RemoteError{Worker: r.Worker, Message: r.Error}
		}
		return r, nil
	}
}
