package harness_test

import (
	"context"
	"testing"

	"github.com/cairn-agents/cairn/pkg/agent/agenttest"
	"github.com/cairn-agents/cairn/pkg/agent/harness"
	"github.com/cairn-agents/cairn/pkg/events"
)

// agent_end is the last event of a run and reaches the sink only once the
// harness is idle with its held writes flushed: a client may prompt again
// upon it.
func TestAgentEndArrivesWhenIdle(t *testing.T) {
	g := newGate("gate")
	type seen struct {
		phase   harness.Phase
		entries int
	}
	var at []seen
	var h *harness.Harness
	sess := agenttest.NewSession()
	var evs []string
	f := newFixture(t, toolThenText, harness.Config{Session: sess, Sink: func(ev events.Event) {
		evs = append(evs, ev.Type)
		if ev.Type == events.EvAgentEnd {
			es := sess.Entries()
			at = append(at, seen{h.Phase(), len(es)})
		}
	}}, g)
	h = f.h
	done := f.prompt("go")
	recv(t, g.started)
	// Held until the run settles.
	if err := h.SetThinkingLevel(context.Background(), "high"); err != nil {
		t.Fatal(err)
	}
	close(g.release)
	if err := wait(t, done); err != nil {
		t.Fatal(err)
	}
	if len(at) != 1 {
		t.Fatalf("%d agent_end events, want 1", len(at))
	}
	if at[0].phase != harness.PhaseIdle {
		t.Fatalf("agent_end arrived in phase %s, want idle", at[0].phase)
	}
	if at[0].entries != len(sess.Entries()) {
		t.Fatalf("agent_end arrived with %d entries in the session, %d once settled", at[0].entries, len(sess.Entries()))
	}
	if !hasEntry(sess.Entries(), events.EntryThinkingLevelChange) {
		t.Fatalf("the held write is not in the session: %s", summary(sess.Entries()))
	}
	if evs[len(evs)-1] != events.EvAgentEnd {
		t.Fatalf("last event %s, want agent_end (all: %v)", evs[len(evs)-1], evs)
	}
	// And a prompt sent upon it runs.
	if err := h.Prompt(context.Background(), user("again")); err != nil {
		t.Fatal(err)
	}
}

func hasEntry(es []events.Entry, typ string) bool {
	for _, e := range es {
		if e.Type == typ {
			return true
		}
	}
	return false
}
