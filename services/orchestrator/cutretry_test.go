package orchestrator

import (
	"context"
	"strings"
	"testing"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/session"
)

// A log that ends in a retried error was cut while the harness backed off:
// the next owner closes the turn before it takes the session's commands.
func TestACutRetryIsRecovered(t *testing.T) {
	p := newPlatform(t)
	ctx := context.Background()
	s, err := session.Create(ctx, p.log, events.Entry{ID: "cut", Model: "scripted/test", Cwd: "cut"})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range []events.Entry{
		{Type: events.EntryMessage, CommandID: "p0", Message: &events.Message{Role: events.RoleUser, Content: events.TextContent("hi"), CommandID: "p0"}},
		{Type: events.EntryMessage, Message: &events.Message{Role: events.RoleAssistant, StopReason: events.StopError, ErrorMessage: "overloaded"},
			Retry: &events.RetryMark{Attempt: 1, DelayMs: 2000, Code: events.RetryTransient}},
	} {
		if _, err := s.Append(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	p.startOrchestrator("o1")
	p.send(events.Command{ID: "p1", Type: events.CmdPrompt, SessionID: "cut", Text: "again"})
	es := p.waitLog("cut", "the prompt after recovery answered", func(es []events.Entry) bool { return named("p1")(es) && lastText(es) == "ok" })
	var got []string
	for _, e := range es {
		got = append(got, e.Type)
	}
	if want := "session message message turn_interrupted message custom message"; strings.Join(got, " ") != want {
		t.Fatalf("log: %s, want %s", strings.Join(got, " "), want)
	}
}

// A log that ends in a reply with a compaction mark was cut while the
// harness compacted: the next owner closes the run like a retry never
// made. With the compaction entry after the reply, the run was settled and
// nothing is closed.
func TestACutCompactionIsRecovered(t *testing.T) {
	p := newPlatform(t)
	ctx := context.Background()
	reply := events.Entry{Type: events.EntryMessage, Message: &events.Message{Role: events.RoleAssistant, StopReason: events.StopEnd, Content: events.TextContent("done")},
		Retry: &events.RetryMark{Code: events.RetryCompaction}}
	for _, c := range []struct {
		sid  string
		tail []events.Entry
	}{
		{"cutc", nil},
		{"donec", []events.Entry{{Type: events.EntryCompaction, Summary: "earlier talk", FirstKeptEntryID: "u0"}}},
	} {
		s, err := session.Create(ctx, p.log, events.Entry{ID: c.sid, Model: "scripted/test", Cwd: c.sid})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range append([]events.Entry{
			{Type: events.EntryMessage, ID: "u0", CommandID: "p0", Message: &events.Message{Role: events.RoleUser, Content: events.TextContent("hi"), CommandID: "p0"}},
			reply,
		}, c.tail...) {
			if _, err := s.Append(ctx, e); err != nil {
				t.Fatal(err)
			}
		}
	}
	p.startOrchestrator("o1")
	for _, c := range []struct{ sid, want string }{
		{"cutc", "session message message turn_interrupted message custom message"},
		{"donec", "session message message compaction message custom message"},
	} {
		p.send(events.Command{ID: "p1" + c.sid, Type: events.CmdPrompt, SessionID: c.sid, Text: "again"})
		es := p.waitLog(c.sid, "the prompt after recovery answered", func(es []events.Entry) bool { return named("p1"+c.sid)(es) && lastText(es) == "ok" })
		var got []string
		for _, e := range es {
			got = append(got, e.Type)
		}
		if strings.Join(got, " ") != c.want {
			t.Errorf("%s log: %s, want %s", c.sid, strings.Join(got, " "), c.want)
		}
	}
}
