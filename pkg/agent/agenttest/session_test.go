package agenttest_test

import (
	"context"
	"testing"

	"github.com/cairn-agents/cairn/pkg/agent/agenttest"
	"github.com/cairn-agents/cairn/pkg/agent/harness"
	"github.com/cairn-agents/cairn/pkg/events"
)

func TestMemorySession(t *testing.T) {
	agenttest.TestSession(t, func(*testing.T) harness.Session { return agenttest.NewSession() })
}

func TestMemorySessionWithAHeader(t *testing.T) {
	agenttest.TestSession(t, func(*testing.T) harness.Session {
		return agenttest.NewSession(events.Entry{Type: events.EntrySession, ID: "s1", Model: "scripted/x"})
	})
}

func TestASecondHeaderIsRefused(t *testing.T) {
	s := agenttest.NewSession(events.Entry{Type: events.EntrySession, ID: "s1"})
	if _, err := s.Append(context.Background(), events.Entry{Type: events.EntrySession, ID: "s2"}); err == nil {
		t.Fatal("a second session header was accepted")
	}
}

func TestLeafToAnUnknownEntryIsRefused(t *testing.T) {
	s := agenttest.NewSession()
	missing := "nope"
	if _, err := s.Append(context.Background(), events.Entry{Type: events.EntryLeaf, TargetID: &missing}); err == nil {
		t.Fatal("a leaf entry naming an unknown entry was accepted")
	}
}
