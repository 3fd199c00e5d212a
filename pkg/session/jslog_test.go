package session_test

import (
	"context"
	"testing"

	"github.com/cairn-agents/cairn/internal/natstest"
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
