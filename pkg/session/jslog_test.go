package session_test

import (
	"context"
	"testing"

	"github.com/cairn-agents/cairn/internal/natstest"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/session"
	"github.com/cairn-agents/cairn/pkg/session/logtest"
)

func TestJetStreamLogConformanceR1(t *testing.T) {
	s := natstest.RunServer(t)
	_, js := natstest.JetStream(t, s.Server)
	l, err := session.NewJetStreamLog(context.Background(), js)
	if err != nil {
		t.Fatal(err)
	}
	logtest.Run(t, logtest.Suite{New: func(*testing.T) session.Log { return l }})
}

// The suite on an R3 stream of a 3-node cluster: the stream's leader is
// killed before the concurrent-writer test and comes back before the watch
// test, so appends, retries and reads run through a failover.
func TestJetStreamLogConformanceR3WithNodeKilled(t *testing.T) {
	c := natstest.RunCluster(t, 3)
	_, js := c.JetStream()
	l, err := session.NewJetStreamLog(context.Background(), js, session.WithReplicas(3))
	if err != nil {
		t.Fatal(err)
	}
	stream := events.Names{}.SessionsStream()
	killed := -1
	logtest.Run(t, logtest.Suite{
		New: func(*testing.T) session.Log { return l },
		Between: func(t *testing.T, next string) {
			switch next {
			case "ConcurrentWritersOneWins":
				killed = c.StreamLeader(stream)
				if killed < 0 {
					t.Fatal("no leader for the sessions stream")
				}
				c.Kill(killed)
			case "WatchSession":
				c.Restart(killed)
			}
		},
	})
	if killed < 0 {
		t.Fatal("the suite never killed a node")
	}
}
