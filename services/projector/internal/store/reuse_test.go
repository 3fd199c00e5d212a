package store

import (
	"fmt"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/services/projector/internal/synth"
)

// A model may reuse a tool call id within a session (the scripted model does
// after an orchestrator failover: its ids count per process). The audit
// indexes must not depend on whether both calls land in one batch.
func TestReusedCallIDGivesIdenticalDumps(t *testing.T) {
	sid := "reuse"
	var log []synth.Msg
	t0 := time.Unix(1700000000, 0)
	var parent *string
	add := func(e events.Entry) {
		t.Helper()
		e.ID = fmt.Sprintf("e%d", len(log))
		e.ParentID = parent
		e.Timestamp = events.FormatTime(t0.Add(time.Duration(len(log)) * time.Second))
		if e.Message != nil {
			e.Message.Timestamp = t0.Add(time.Duration(len(log)) * time.Second).UnixMilli()
		}
		data, err := e.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		log = append(log, synth.Msg{Subject: events.Names{}.SessionSubject(events.DefaultRef(sid)), Data: data})
		id := e.ID
		parent = &id
	}
	h := events.Entry{Type: events.EntrySession, Version: events.PiVersion}
	data, err := func() ([]byte, error) {
		h.ID, h.Timestamp = sid, events.FormatTime(t0)
		return h.MarshalJSON()
	}()
	if err != nil {
		t.Fatal(err)
	}
	log = append(log, synth.Msg{Subject: events.Names{}.SessionSubject(events.DefaultRef(sid)), Data: data})
	root := sid
	parent = &root
	for _, tool := range []string{"ls", "write"} {
		add(events.Entry{Type: events.EntryMessage, Message: &events.Message{Role: events.RoleUser, Content: events.TextContent("go")}})
		add(events.Entry{Type: events.EntryMessage, Message: &events.Message{Role: events.RoleAssistant, StopReason: events.StopToolUse,
			Content: events.Content{Blocks: []events.Block{{Type: events.BlockToolCall, ID: "call_1_0", Name: tool, Arguments: []byte(`{}`)}}}}})
		add(events.Entry{Type: events.EntryMessage, Message: &events.Message{Role: events.RoleToolResult, ToolCallID: "call_1_0", ToolName: tool,
			Content: events.TextContent("ok")}})
		add(events.Entry{Type: events.EntryMessage, Message: &events.Message{Role: events.RoleAssistant, StopReason: events.StopEnd,
			Content: events.TextContent("done")}})
	}
	var want Digest
	for _, batch := range []int{1, 2, 5, 100} {
		db := openMem(t, vfs.NewMem())
		applyAll(t, db, log, batch)
		got := digest(t, db)
		if err := db.Close(); err != nil {
			t.Fatalf("close db: %v", err)
		}
		if batch == 1 {
			want = got
			continue
		}
		if got != want {
			t.Errorf("batch %d: dump %+v, batch 1 gave %+v", batch, got, want)
		}
	}
}
