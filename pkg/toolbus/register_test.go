package toolbus

import (
	"context"
	"errors"
	"testing"

	"github.com/cairn-agents/cairn/internal/natstest"
	"github.com/cairn-agents/cairn/pkg/events"
)

func TestRegisterWithoutBucketSaysWhatIsMissing(t *testing.T) {
	srv := natstest.RunServer(t)
	nc, _ := natstest.JetStream(t, srv.Server)
	b, err := New(nc, events.Names{})
	if err != nil {
		t.Fatal(err)
	}
	err = b.Register(context.Background(), "default", events.ToolSpec{Name: "echo", Description: "echo",
		Parameters: []byte(`{"type":"object"}`)})
	if !errors.Is(err, ErrNotProvisioned) {
		t.Fatalf("Register before provisioning = %v, want ErrNotProvisioned", err)
	}
}
