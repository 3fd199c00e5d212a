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
// gets both results recorded: their ids are derived from the assistant
// entry that made each call, not from the call id alone.
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
		stored, err := st.Append(ctx, events.Entry{Type: events.EntryMessage, Message: &res})
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

// TestStoreOwnsEntryIDs: the store derives each id as its doc says, from
// what caused the entry, and keeps an id it is given.
func TestStoreOwnsEntryIDs(t *testing.T) {
	ctx := context.Background()
	s, err := session.Create(ctx, session.NewMemLog(0, nil), events.Entry{ID: "ids", Model: "scripted/demo"})
	if err != nil {
		t.Fatal(err)
	}
	st := newStore(s, nil)
	appendE := func(e events.Entry) events.Entry {
		t.Helper()
		stored, err := st.Append(ctx, e)
		if err != nil {
			t.Fatal(err)
		}
		return stored
	}
	prompt := appendE(events.Entry{Type: events.EntryMessage, CommandID: "c1",
		Message: &events.Message{Role: events.RoleUser, CommandID: "c1", Content: events.TextContent("hi")}})
	if want := events.DeriveID("cmd", "c1", "user"); prompt.ID != want {
		t.Errorf("user message of c1: id %s, want DeriveID(cmd, c1, user) %s", prompt.ID, want)
	}
	seq := s.LastSeq()
	call := appendE(events.Entry{Type: events.EntryMessage, Message: &events.Message{Role: events.RoleAssistant,
		Provider: "scripted", Model: "demo", API: "scripted", StopReason: events.StopToolUse, Usage: &events.Usage{},
		Content: events.Content{Blocks: []events.Block{{Type: events.BlockToolCall, ID: "t1", Name: "ls", Arguments: []byte("{}")}}}}})
	if want := events.DeriveID("ids", fmt.Sprint(seq), events.EntryMessage); call.ID != want {
		t.Errorf("assistant message: id %s, want DeriveID(sid, %d, message) %s", call.ID, seq, want)
	}
	result := appendE(events.Entry{Type: events.EntryMessage, Message: &events.Message{Role: events.RoleToolResult,
		ToolCallID: "t1", ToolName: "ls", Content: events.TextContent("a.go")}})
	if want := events.DeriveID("result", call.ID, "t1"); result.ID != want {
		t.Errorf("tool result: id %s, want DeriveID(result, %s, t1) %s", result.ID, call.ID, want)
	}
	st.stamp(events.EntryModelChange, "c2")
	change := appendE(events.Entry{Type: events.EntryModelChange, Provider: "scripted", ModelID: "other"})
	if want := events.DeriveID("cmd", "c2", events.EntryModelChange); change.ID != want || change.CommandID != "c2" {
		t.Errorf("model_change of c2: id %s command %q, want DeriveID(cmd, c2, model_change) %s", change.ID, change.CommandID, want)
	}
	given := appendE(events.Entry{Type: events.EntryMessage, ID: "given-1", Message: &events.Message{Role: events.RoleToolResult,
		ToolCallID: "t1", ToolName: "ls", Content: events.TextContent("again")}})
	if given.ID != "given-1" {
		t.Errorf("an entry given id given-1 was stored as %s: the store rewrote it", given.ID)
	}
}
