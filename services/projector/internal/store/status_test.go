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

// A session reads running from its prompt to the run's settling: an error
// message with a retry mark (a back-off, or the compaction before an
// overflow retry follows) is not the end; the reply after it, or a
// turn_interrupted entry closing a retry never made, is.
func TestStatusStaysRunningThroughRetries(t *testing.T) {
	db := openMem(t, vfs.NewMem())
	defer func() {
		if err := db.Close(); err != nil {
			t.Errorf("close db: %v", err)
		}
	}()
	n := events.Names{}
	ts := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var log []synth.Msg
	var parent *string
	add := func(e events.Entry) {
		e.V = events.SchemaVersion
		if e.ID == "" {
			e.ID = events.DeriveID("t", fmt.Sprint(len(log)))
		}
		if e.Type != events.EntrySession {
			e.ParentID = parent
			id := e.ID
			parent = &id
		}
		ts = ts.Add(time.Second)
		e.Timestamp = events.FormatTime(ts)
		data, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		log = append(log, synth.Msg{Subject: n.SessionSubject(events.DefaultRef("s1")), Data: data})
	}
	assistant := func(stop events.StopReason, text string, retry *events.RetryMark) events.Entry {
		m := &events.Message{Role: events.RoleAssistant, Content: events.TextContent(text), StopReason: stop}
		if stop == events.StopError {
			m.ErrorMessage = "overloaded"
		}
		return events.Entry{Type: events.EntryMessage, Message: m, Retry: retry}
	}
	user := func(text string) events.Entry {
		return events.Entry{Type: events.EntryMessage, Message: &events.Message{Role: events.RoleUser, Content: events.TextContent(text)}}
	}
	steps := []struct {
		entry events.Entry
		want  string
	}{
		{events.Entry{Type: events.EntrySession, ID: "s1", Version: events.PiVersion, Model: "scripted/x"}, StatusIdle},
		{user("hi"), StatusRunning},
		{assistant(events.StopError, "", &events.RetryMark{Attempt: 1, DelayMs: 2000, Code: events.RetryTransient}), StatusRunning},
		{assistant(events.StopError, "", &events.RetryMark{Attempt: 2, DelayMs: 4000, Code: events.RetryTransient}), StatusRunning},
		{assistant(events.StopEnd, "finally", nil), StatusIdle},
		{user("again"), StatusRunning},
		{assistant(events.StopError, "", nil), StatusIdle}, // not retried: the end
		{user("big"), StatusRunning},
		{assistant(events.StopError, "", &events.RetryMark{Attempt: 1, Code: events.RetryOverflow}), StatusRunning},
		{events.Entry{Type: events.EntryTurnInterrupted, Reason: "the run ended before the model was called again"}, StatusIdle},
		// a threshold compaction after the run's last reply: running until
		// its entry (a model change held meanwhile does not settle it)
		{user("long"), StatusRunning},
		{assistant(events.StopEnd, "done", &events.RetryMark{Code: events.RetryCompaction}), StatusRunning},
		{events.Entry{Type: events.EntryModelChange, Provider: "scripted", ModelID: "y"}, StatusRunning},
		{events.Entry{Type: events.EntryCompaction, Summary: "earlier talk", FirstKeptEntryID: "t1"}, StatusIdle},
		// a compaction in the middle of a run does not settle it
		{user("tools"), StatusRunning},
		{assistant(events.StopToolUse, "", nil), StatusRunning},
		{events.Entry{Type: events.EntryMessage, Message: &events.Message{Role: events.RoleToolResult, ToolCallID: "c1", ToolName: "t", Content: events.TextContent("out")}}, StatusRunning},
		{events.Entry{Type: events.EntryCompaction, Summary: "earlier talk", FirstKeptEntryID: "t1"}, StatusRunning},
		{assistant(events.StopLength, "cut", &events.RetryMark{Code: events.RetryCompaction}), StatusRunning},
		{events.Entry{Type: events.EntryTurnInterrupted, Reason: "the compaction after the run's last reply was not recorded"}, StatusIdle},
	}
	for i, s := range steps {
		add(s.entry)
		applyAll(t, db, log, 1)
		got, err := db.Session(events.DefaultRef("s1"))
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != s.want {
			t.Fatalf("after entry %d (%s): status %s, want %s", i, s.entry.Type, got.Status, s.want)
		}
	}
}
