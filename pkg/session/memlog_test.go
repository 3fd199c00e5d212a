package session_test

import (
	"testing"

	"github.com/cairn-agents/cairn/pkg/session"
	"github.com/cairn-agents/cairn/pkg/session/logtest"
)

func TestMemLogConformance(t *testing.T) {
	l := session.NewMemLog(0, nil)
	logtest.Run(t, logtest.Suite{New: func(*testing.T) session.Log { return l }})
}
