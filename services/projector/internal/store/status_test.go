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
// message followed by a retry entry (a back-off, or the compaction before
// an overflow retry) is not the end; the reply after it, or a
// turn_interrupted entry closing a retry never made, is.
func TestStatusStaysRunningThroughRetries(t *testing.T) {
	db := openMem(t, vfs.NewMem())
	defer db.Close()
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
		log = append(log, synth.Msg{Subject: n.SessionSubject("s1"), Data: data})
	}
	assistant := func(stop events.StopReason, text string) events.Entry {
		return events.Entry{Type: events.EntryMessage, Message: &events.Message{Role: events.RoleAssistant,
			Content: events.TextContent(text), StopReason: stop, ErrorMessage: map[bool]string{true: "overloaded"}[stop == events.StopError]}}
	}
	retry := events.Entry{Type: events.EntryRetry, Reason: "overloaded", Code: events.RetryTransient}
	steps := []struct {
		entry events.Entry
		want  string
	}{
		{events.Entry{Type: events.EntrySession, ID: "s1", Version: events.PiVersion, Model: "scripted/x"}, StatusIdle},
		{events.Entry{Type: events.EntryMessage, Message: &events.Message{Role: events.RoleUser, Content: events.TextContent("hi")}}, StatusRunning},
		{assistant(events.StopError, ""), StatusIdle},
		{retry, StatusRunning},
		{assistant(events.StopError, ""), StatusIdle},
		{retry, StatusRunning},
		{assistant(events.StopEnd, "finally"), StatusIdle},
		{events.Entry{Type: events.EntryMessage, Message: &events.Message{Role: events.RoleUser, Content: events.TextContent("big")}}, StatusRunning},
		{assistant(events.StopError, ""), StatusIdle},
		{events.Entry{Type: events.EntryRetry, Reason: "prompt is too long", Code: events.RetryOverflow}, StatusRunning},
		{events.Entry{Type: events.EntryTurnInterrupted, Reason: "the run ended before the model was called again"}, StatusIdle},
	}
	for i, s := range steps {
		add(s.entry)
		applyAll(t, db, log, 1)
		got, err := db.Session("s1")
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != s.want {
			t.Fatalf("after entry %d (%s): status %s, want %s", i, s.entry.Type, got.Status, s.want)
		}
	}
}
