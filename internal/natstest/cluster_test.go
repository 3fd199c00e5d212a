package natstest

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

func TestClusterSurvivesLeaderKill(t *testing.T) {
	c := RunCluster(t, 3)
	_, js := c.JetStream()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "R3", Subjects: []string{"r3.>"}, Replicas: 3}); err != nil {
		t.Fatal(err)
	}
	if _, err := js.Publish(ctx, "r3.a", []byte("one")); err != nil {
		t.Fatal(err)
	}
	leader := c.StreamLeader("R3")
	if leader < 0 {
		t.Fatal("no stream leader")
	}
	c.Kill(leader)
	// Publishing succeeds again once the two survivors elect a leader.
	var ack *jetstream.PubAck
	tick := time.NewTicker(50 * time.Millisecond) // publish pacing
	defer tick.Stop()
	for {
		// Each attempt has its own deadline: a request dropped while the
		// survivors elect a leader is never answered, and nats.go applies
		// its default timeout only to contexts without a deadline.
		actx, acancel := context.WithTimeout(ctx, 2*time.Second)
		var err error
		ack, err = js.Publish(actx, "r3.a", []byte("two"))
		acancel()
		if err == nil {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("no publish succeeded after killing the leader: %v", err)
		case <-tick.C:
		}
	}
	if ack.Sequence != 2 {
		t.Fatalf("sequence after failover = %d, want 2", ack.Sequence)
	}
	c.Restart(leader)
	s, err := js.Stream(ctx, "R3")
	if err != nil {
		t.Fatal(err)
	}
	if info, err := s.Info(ctx); err != nil || info.State.Msgs != 2 {
		t.Fatalf("after restart: %v msgs, %v; want 2", info, err)
	}
}
