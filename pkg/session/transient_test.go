package session

import (
	"context"
	"fmt"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// A direct get answered by a replica that has not applied the message yet
// is retried (the read back after a duplicate append on R3); a 404 on its
// own, and other answers, are not.
func TestTransient(t *testing.T) {
	ctx := context.Background()
	notFound := &jetstream.APIError{Code: 404, ErrorCode: 10037, Description: "message not found"}
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"replica behind", fmt.Errorf("%w: %w", errNotApplied, notFound), true},
		{"not found", notFound, false},
		{"503", &jetstream.APIError{Code: 503}, true},
		{"wrong last sequence", &jetstream.APIError{Code: 400, ErrorCode: jetstream.JSErrCodeStreamWrongLastSequence}, false},
		{"timeout", nats.ErrTimeout, true},
		{"reconnecting", nats.ErrConnectionReconnecting, true},
	} {
		if got := transient(ctx, tc.err); got != tc.want {
			t.Errorf("%s: transient = %v, want %v", tc.name, got, tc.want)
		}
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if transient(cancelled, nats.ErrTimeout) {
		t.Error("transient after the context ended = true, want false")
	}
}
