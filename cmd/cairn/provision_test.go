package main

import (
	"context"
	"testing"

	"github.com/cairn-agents/cairn/internal/natstest"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Services started right after `cairn provision --replicas 3` must find every
// stream and bucket answering: provision returns only once each has a leader.
func TestProvisionReturnsWhenEveryStreamHasALeader(t *testing.T) {
	c := natstest.RunCluster(t, 3)
	code, out, errOut := cairn(t, "provision", "--nats", c.URLs(), "--replicas", "3")
	if code != 0 {
		t.Fatalf("provision: exit %d\n%s%s", code, out, errOut)
	}
	nc, err := nats.Connect(c.URLs())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	n := 0
	for info := range js.ListStreams(ctx).Info() {
		n++
		if info.Config.Replicas != 3 {
			t.Errorf("stream %s has %d replicas, want 3", info.Config.Name, info.Config.Replicas)
		}
		if info.Cluster == nil || info.Cluster.Leader == "" {
			t.Errorf("stream %s has no leader right after provision returned", info.Config.Name)
		}
	}
	if n < 8 {
		t.Errorf("%d streams after provision, want every stream and bucket Cairn needs (at least 8)", n)
	}
}
