package projector

import (
	"testing"
	"time"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/services/projector/internal/synth"
)

// The replay route answers what Replay returns, and refuses a bad until or
// session the way every query does.
func TestReplayRoute(t *testing.T) {
	_, js := sessionsStream(t)
	t0 := time.Date(2026, 11, 3, 12, 0, 0, 0, time.UTC)
	ts := func(i int) string { return events.FormatTime(t0.Add(time.Duration(i) * time.Second)) }
	var msgs []synth.Msg
	for _, e := range []events.Entry{
		{Type: events.EntrySession, Version: 3, ID: "r1", Timestamp: ts(0), Model: "scripted/a"},
		{Type: events.EntryMessage, ID: "e1", Timestamp: ts(1), Message: &events.Message{Role: events.RoleUser, Content: events.TextContent("hi")}},
		{Type: events.EntryMessage, ID: "e2", ParentID: strPtr("e1"), Timestamp: ts(2), Message: &events.Message{Role: events.RoleAssistant, Content: events.TextContent("hello"), StopReason: events.StopEnd}},
	} {
		b, err := e.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		msgs = append(msgs, synth.Msg{Subject: "cairn.session.default.r1", Data: b})
	}
	publish(t, js, msgs)
	p := testProjector(t, nil)
	p.cfg.JetStream = js
	h := p.Handler()

	var full, at2, atTime Replayed
	if code := getJSON(t, h, "/v1/sessions/r1/replay", &full); code != 200 || full.Summary.Entries != 3 || full.Summary.Status != StatusIdle || len(full.Tree.Nodes) != 2 {
		t.Fatalf("full replay = %d %+v", code, full.Summary)
	}
	if code := getJSON(t, h, "/v1/sessions/r1/replay?until=2", &at2); code != 200 || at2.Summary.Entries != 2 || at2.Summary.Status != StatusRunning || len(at2.Entries) != 2 {
		t.Fatalf("replay until 2 = %d %+v", code, at2.Summary)
	}
	if code := getJSON(t, h, "/v1/sessions/r1/replay?until="+ts(1), &atTime); code != 200 || atTime.Summary.Entries != 2 {
		t.Fatalf("replay until %s = %d %+v", ts(1), code, atTime.Summary)
	}
	for path, want := range map[string]int{
		"/v1/sessions/nobody/replay":          404,
		"/v1/sessions/r1/replay?until=0":      400,
		"/v1/sessions/r1/replay?until=monday": 400,
		"/v1/sessions/r1/replay?until=":       400,
		"/v1/sessions/r1/replay?at=1":         400,
		"/v1/sessions/bad%20id/replay":        400,
	} {
		var out struct {
			Error struct{ Code, Message string } `json:"error"`
		}
		if code := getJSON(t, h, path, &out); code != want || out.Error.Message == "" {
			t.Errorf("%s = %d %+v, want %d with a message", path, code, out, want)
		}
	}
}
