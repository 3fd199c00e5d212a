package store

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/services/projector/internal/synth"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// A sub-agent's usage shows under every ancestor: a parent, its child and
// its grandchild, whose replies each cost something; the same in any
// batching.
func TestSubagentUsageShowsUnderAncestors(t *testing.T) {
	n := events.Names{}
	ts := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var log []synth.Msg
	add := func(sid string, e events.Entry) {
		e.V = events.SchemaVersion
		if e.ID == "" {
			e.ID = events.DeriveID("t", fmt.Sprint(len(log)))
		}
		ts = ts.Add(time.Second)
		e.Timestamp = events.FormatTime(ts)
		data, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		log = append(log, synth.Msg{Subject: n.SessionSubject(events.DefaultRef(sid)), Data: data})
	}
	header := func(sid, parent, call string, depth int) {
		add(sid, events.Entry{Type: events.EntrySession, ID: sid, Version: events.PiVersion, Model: "scripted/x",
			ParentSession: parent, ParentToolCallID: call, TaskDepth: depth})
	}
	reply := func(sid string, tokens int64, cost float64) {
		add(sid, events.Entry{Type: events.EntryMessage, Message: &events.Message{Role: events.RoleAssistant, Content: events.TextContent("done"),
			StopReason: events.StopEnd, Usage: &events.Usage{Input: tokens, TotalTokens: tokens, Cost: events.Cost{Total: cost}}}})
	}
	child, grandchild := events.ChildSessionID("top", "k1"), events.ChildSessionID(events.ChildSessionID("top", "k1"), "k1")
	header("top", "", "", 0)
	reply("top", 10, 0.5)
	header("fork", "top", "", 0) // a fork names a parent but no task call: not a sub-agent
	reply("fork", 1000, 9)
	header(child, "top", "k1", 1)
	reply(child, 20, 1)
	header(grandchild, child, "k1", 2)
	reply(grandchild, 40, 2)
	header("orphan", "nowhere", "k9", 1) // a parent the store does not know leaves no trace

	var dumps []Digest
	for _, batch := range []int{1, 100} {
		db := openMem(t, vfs.NewMem())
		applyAll(t, db, log, batch)
		top, err := db.Session(events.DefaultRef("top"))
		if err != nil {
			t.Fatal(err)
		}
		if s := top.Subagents; s == nil || s.Sessions != 2 || s.Tokens.Total != 60 || s.Cost != 3 || top.Tokens.Total != 10 {
			t.Fatalf("top: own %d tokens, sub-agents %+v; want 10 own, 2 sessions with 60 tokens and cost 3", top.Tokens.Total, s)
		}
		c, err := db.Session(events.DefaultRef(child))
		if err != nil {
			t.Fatal(err)
		}
		if s := c.Subagents; c.ParentSession != "top" || c.ParentToolCallID != "k1" || s == nil || s.Sessions != 1 || s.Tokens.Total != 40 {
			t.Fatalf("child: parent %q call %q, sub-agents %+v", c.ParentSession, c.ParentToolCallID, s)
		}
		if _, err := db.Session(events.DefaultRef("nowhere")); err == nil {
			t.Fatal("an unknown parent got a summary")
		}
		dumps = append(dumps, digest(t, db))
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if dumps[0] != dumps[1] {
		t.Fatal("batch sizes 1 and 100 gave different databases")
	}
}
