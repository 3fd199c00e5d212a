package jsretry

import (
	"context"
	"errors"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// A worker started while the registry elects a leader waits for it; an
// answer that will not change (the bucket does not exist) ends at once.
func TestDoRetriesOnlyUnavailable(t *testing.T) {
	calls := 0
	err := Do(context.Background(), func(context.Context) error {
		calls++
		switch calls {
		case 1:
			return nats.ErrNoResponders
		case 2:
			return &jetstream.APIError{Code: 503, Description: "JetStream system temporarily unavailable"}
		case 3:
			return context.DeadlineExceeded
		case 4:
			return nats.ErrDisconnected // the client's node was killed; it reconnects
		case 5:
			return nats.ErrConnectionReconnecting
		}
		return nil
	})
	if err != nil || calls != 6 {
		t.Fatalf("whileUnavailable = %v after %d calls, want nil after 6", err, calls)
	}
	calls = 0
	err = Do(context.Background(), func(context.Context) error {
		calls++
		return jetstream.ErrBucketNotFound
	})
	if !errors.Is(err, jetstream.ErrBucketNotFound) || calls != 1 {
		t.Fatalf("whileUnavailable = %v after %d calls, want ErrBucketNotFound after 1", err, calls)
	}
	ctx, cancel := context.WithCancel(context.Background())
	err = Do(ctx, func(context.Context) error {
		cancel()
		return nats.ErrNoResponders
	})
	if !errors.Is(err, nats.ErrNoResponders) {
		t.Fatalf("whileUnavailable after cancel = %v, want the last error", err)
	}
}
