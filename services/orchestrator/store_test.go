package orchestrator

import (
	"context"
	"fmt"
	"testing"

	"github.com/cairn-agents/cairn/internal/natstest"
	"github.com/cairn-agents/cairn/pkg/agent/agenttest"
	"github.com/cairn-agents/cairn/pkg/agent/harness"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/session"
)

// TestStoreReusedCallID: a model that reuses a tool call id in a session
// gets both results recorded, even when the harness ids them by the call id
// alone (DeriveID("tool", id)), as it does.
func TestStoreReusedCallID(t *testing.T) {
	srv := natstest.RunServer(t)
	_, js := natstest.JetStream(t, srv.Server)
	ctx := context.Background()
	log, err := session.NewJetStreamLog(ctx, js)
	if err != nil {
		t.Fatal(err)
	}
	s, err := session.Create(ctx, log, events.Entry{ID: "r1", Model: "scripted/demo", Cwd: "r1"})
	if err != nil {
		t.Fatal(err)
	}
	st := newStore(s, nil)
	var results []string
	for turn := range 2 {
		call := events.Message{Role: events.RoleAssistant, Content: events.Content{Blocks: []events.Block{
			{Type: events.BlockToolCall, ID: "call_1_0", Name: "ls", Arguments: []byte("{}")}}}}
		if _, err := st.Append(ctx, events.Entry{Type: events.EntryMessage, ID: events.NewID(), Message: &call}); err != nil {
			t.Fatalf("turn %d: assistant: %v", turn, err)
		}
		res := events.Message{Role: events.RoleToolResult, ToolCallID: "call_1_0", ToolName: "ls",
			Content: events.Content{Blocks: []events.Block{{Type: events.BlockText, Text: "ok"}}}}
		stored, err := st.Append(ctx, events.Entry{Type: events.EntryMessage, ID: events.DeriveID("tool", "call_1_0"), Message: &res})
		if err != nil {
			t.Fatalf("turn %d: result: %v", turn, err)
		}
		results = append(results, stored.ID)
	}
	if results[0] == results[1] {
		t.Fatalf("the second result was taken for the first (both entry %s): the reused call id lost it", results[0])
	}
	n := 0
	var es []events.Entry
	_ = st.do(func(s *session.Session) error { es = s.Entries(); return nil }) // f returns nil
	for _, e := range es {
		if e.Type == events.EntryMessage && e.Message.Role == events.RoleToolResult {
			n++
		}
	}
	if n != 2 {
		t.Fatalf("%d tool results in the session, want 2", n)
	}
}

// TestStoreIsAHarnessSession: the orchestrator's store passes the
// conformance suite of harness.Session, the header coming with the path.
func TestStoreIsAHarnessSession(t *testing.T) {
	log := session.NewMemLog(0, nil)
	n := 0
	agenttest.TestSession(t, func(t *testing.T) harness.Session {
		n++
		s, err := session.Create(context.Background(), log, events.Entry{ID: fmt.Sprintf("conf-%d", n), Model: "scripted/demo"})
		if err != nil {
			t.Fatal(err)
		}
		return newStore(s, nil)
	})
}
