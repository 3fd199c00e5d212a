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
	if want := "session message message turn_interrupted message message"; strings.Join(got, " ") != want {
		t.Fatalf("log: %s, want %s", strings.Join(got, " "), want)
	}
}
