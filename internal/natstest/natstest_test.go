package natstest

import (
	"context"
	"testing"

	"github.com/nats-io/nats.go/jetstream"
)

func TestRunServerPublishes(t *testing.T) {
	s := RunServer(t)
	_, js := JetStream(t, s.Server)
	ctx := context.Background()
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "T", Subjects: []string{"t.>"}}); err != nil {
		t.Fatal(err)
	}
	ack, err := js.Publish(ctx, "t.x", []byte("hello"))
	if err != nil {
		t.Fatal(err)
	}
	if ack.Sequence != 1 {
		t.Fatalf("sequence = %d, want 1", ack.Sequence)
	}
}
