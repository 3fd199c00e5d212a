package gateway

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/session"
)

// TestCommandStatusFollowsTheLog drives one session's log through a
// prompt's run and asks after each append what the gateway says of it.
func TestCommandStatusFollowsTheLog(t *testing.T) {
	f, log := newLogFixture(t)
	ctx := context.Background()
	s, err := session.Create(ctx, log, events.Entry{ID: "r1", Model: "scripted/demo", Cwd: "r1"})
	if err != nil {
		t.Fatal(err)
	}
	appendMsg := func(m events.Message) {
		t.Helper()
		if _, err := s.Append(ctx, events.Entry{Type: events.EntryMessage, Message: &m}); err != nil {
			t.Fatal(err)
		}
	}
	status := func(cid string) map[string]any {
		t.Helper()
		code, out := f.do(t, "GET", "/v1/sessions/r1/commands/"+cid, "")
		if code != 200 {
			t.Fatalf("status of %s = %d %v", cid, code, out)
		}
		return out
	}
	expect := func(cid, state string) map[string]any {
		t.Helper()
		out := status(cid)
		if out["state"] != state || out["commandId"] != cid {
			t.Fatalf("status of %s = %v, want state %s", cid, out, state)
		}
		return out
	}

	expect("p1", "pending")
	appendMsg(events.Message{Role: events.RoleUser, Content: events.TextContent("go"), CommandID: "p1", Timestamp: 1})
	expect("p1", "running")
	appendMsg(events.Message{Role: events.RoleAssistant, Content: events.TextContent("calling"), StopReason: events.StopToolUse, Timestamp: 2})
	expect("p1", "running")
	appendMsg(events.Message{Role: events.RoleToolResult, ToolCallID: "c1", ToolName: "ls", Content: events.TextContent("a b"), Timestamp: 3})
	expect("p1", "running")
	appendMsg(events.Message{Role: events.RoleAssistant, Content: events.TextContent("done"), StopReason: events.StopEnd, Timestamp: 4})
	out := expect("p1", "settled")
	if m, _ := out["message"].(map[string]any); m == nil || m["stopReason"] != "stop" {
		t.Fatalf("settled status lacks the final message: %v", out)
	}
	// A follow-up delivered into the same run makes it run again.
	appendMsg(events.Message{Role: events.RoleUser, Content: events.TextContent("and?"), CommandID: "f1", Timestamp: 5})
	expect("p1", "running")
	expect("f1", "running")

	// A crash closes the turn: settled, interrupted.
	if _, err := s.Append(ctx, events.Entry{Type: events.EntryTurnInterrupted, Reason: "crash"}); err != nil {
		t.Fatal(err)
	}
	if out := expect("f1", "settled"); out["interrupted"] != true || out["message"] != nil {
		t.Fatalf("interrupted run = %v", out)
	}
	if _, err := s.Append(ctx, events.Entry{Type: events.EntryCommandRejected, CommandID: "p2", Reason: "the agent is running", Code: "busy"}); err != nil {
		t.Fatal(err)
	}
	if out := expect("p2", "rejected"); out["reason"] != "the agent is running" || out["code"] != "busy" {
		t.Fatalf("rejected = %v", out)
	}
	if _, err := s.Append(ctx, events.Entry{Type: events.EntryModelChange, Provider: "scripted", ModelID: "other", CommandID: "m1"}); err != nil {
		t.Fatal(err)
	}
	expect("m1", "applied")

	for path, want := range map[string]string{
		"/v1/sessions/nope/commands/p1":     `no session "nope"`,
		"/v1/sessions/r1/commands/bad%20id": "command id in path",
		"/v1/sessions/b%2Fd/commands/p1":    "session id in path",
	} {
		code, out := f.do(t, "GET", path, "")
		if code/100 != 4 || !strings.Contains(errMsg(out), want) {
			t.Errorf("GET %s = %d %v, want a 4xx naming %q", path, code, out, want)
		}
	}
}

// TestEventsStartWithTheirPosition checks that a stream that does not
// resume names its position first, and that resuming from it (even 0)
// replays what came in between.
func TestEventsStartWithTheirPosition(t *testing.T) {
	f := newFixture(t, nil)
	f.created(t, "", "s2")
	resp, err := f.hc.Get(f.url + "/v1/sessions/s2/events")
	if err != nil {
		t.Fatal(err)
	}
	pos := readPosition(t, resp)
	resp.Body.Close()
	if pos != "0" {
		t.Fatalf("position of an empty stream = %q, want 0", pos)
	}
	publishEvent(t, f, "s2", 1)
	publishEvent(t, f, "s2", 2)
	// Lost the connection before any event: resuming from its position
	// misses nothing.
	req, _ := http.NewRequest("GET", f.url+"/v1/sessions/s2/events", nil)
	req.Header.Set("Last-Event-ID", pos)
	resp, err = f.hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	got := readSSE(t, resp.Body, 2)
	resp.Body.Close()
	if got[0].id != "1" || got[1].id != "2" {
		t.Fatalf("resumed from 0: ids %v, want 1, 2", got)
	}
	// A new stream's position is past what the fanout has delivered.
	waitFor(t, func() bool {
		resp, err := f.hc.Get(f.url + "/v1/sessions/s2/events")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		return readPosition(t, resp) == "2"
	})
}

// readPosition reads the id-only field a stream starts with.
func readPosition(t *testing.T, resp *http.Response) string {
	t.Helper()
	buf := make([]byte, 0, 64)
	one := make([]byte, 1)
	for !strings.HasSuffix(string(buf), "\n\n") {
		if _, err := resp.Body.Read(one); err != nil {
			t.Fatalf("stream ended before its position: %q, %v", buf, err)
		}
		buf = append(buf, one[0])
	}
	id, ok := strings.CutPrefix(strings.TrimSpace(string(buf)), "id: ")
	if !ok {
		t.Fatalf("stream starts with %q, want an id field", buf)
	}
	return id
}
