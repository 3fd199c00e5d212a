package orchestrator

import (
	"context"
	"strings"
	"testing"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/session"
)

// TestCommandsSurviveAnotherWriter: while the session's actor is resident,
// another writer appends to the session (what a second instance does when
// both hold the partition while leases are in doubt). The actor's next
// append conflicts; the command it was applying, and the ones behind it,
// must still be applied — once, in order, after the other writer's entry —
// by a new actor that reloads the session, not left until the partition
// moves to another instance.
func TestCommandsSurviveAnotherWriter(t *testing.T) {
	p := newPlatform(t)
	p.startOrchestrator("o1")
	p.send(events.Command{ID: "c1", Type: events.CmdCreate, SessionID: "s1"})
	p.send(events.Command{ID: "c2", Type: events.CmdPrompt, SessionID: "s1", Text: "hello"})
	p.waitLog("s1", "first reply", func(es []events.Entry) bool { return named("c2")(es) && lastText(es) == "ok" })

	ctx := context.Background()
	other, err := session.Load(ctx, p.log, events.DefaultRef("s1"))
	if err != nil {
		t.Fatal(err)
	}
	first := other.Entries()[1].ID
	if _, err := other.Append(ctx, events.Entry{Type: events.EntryLabel, CommandID: "other", TargetID: &first, Label: "by the other writer"}); err != nil {
		t.Fatal(err)
	}

	p.send(events.Command{ID: "c3", Type: events.CmdPrompt, SessionID: "s1", Text: "again"})
	p.send(events.Command{ID: "c4", Type: events.CmdSetThinkingLevel, SessionID: "s1", Level: "high"})
	p.send(events.Command{ID: "c5", Type: events.CmdPrompt, SessionID: "s1", Text: "and again", WhenBusy: events.BusyFollowUp})
	es := p.waitLog("s1", "every command after the conflict", func(es []events.Entry) bool {
		return named("c3")(es) && named("c4")(es) && named("c5")(es) && lastText(es) == "ok" && idleLog(es)
	})

	order := namedOnce(t, es)
	for _, e := range es {
		if e.Type == events.EntryCommandRejected {
			t.Errorf("command %s rejected: %s (%s)", e.CommandID, e.Reason, e.Code)
		}
	}
	if got, want := strings.Join(order, " "), "c1 c2 other c3 c4 c5"; got != want {
		t.Errorf("commands in the log: %s, want %s", got, want)
	}
	recs, err := p.log.Read(ctx, events.DefaultRef("s1"), 0)
	if err != nil {
		t.Fatal(err)
	}
	if errs := session.VerifyChain(recs); len(errs) > 0 {
		t.Errorf("hash chain: %v", errs[0])
	}
}

// namedOnce checks that every command id in es is named by exactly one
// entry, and returns the ids in the order of their entries.
func namedOnce(t *testing.T, es []events.Entry) []string {
	t.Helper()
	count := map[string]int{}
	var order []string
	for _, e := range es {
		if e.CommandID != "" {
			if count[e.CommandID]++; count[e.CommandID] == 1 {
				order = append(order, e.CommandID)
			}
		}
	}
	for id, n := range count {
		if n != 1 {
			t.Errorf("command %s is named by %d entries, want 1", id, n)
		}
	}
	return order
}

// idleLog reports whether the log's last message is a settled assistant reply.
func idleLog(es []events.Entry) bool {
	for i := len(es) - 1; i >= 0; i-- {
		if m := es[i].Message; m != nil {
			return m.Role == events.RoleAssistant && len(m.ToolCalls()) == 0
		}
	}
	return false
}
