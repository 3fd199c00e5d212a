package orchestrator

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/cairn-agents/cairn/internal/kittest"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/provider/scripted"
)

// TestPrincipalsAreKeptOnlyForCommandsInFlight: a resident session's store
// notes each command's sender only until the entry naming the command is
// durable (or the command is finished without one), so a session that
// stays in memory does not keep one note per command it ever took; and
// every entry naming a command still names its sender.
func TestPrincipalsAreKeptOnlyForCommandsInFlight(t *testing.T) {
	p := newPlatform(t)
	sc, err := scripted.Parse([]byte(script))
	if err != nil {
		t.Fatal(err)
	}
	prov := scripted.New(sc)
	o, err := New(Config{Conn: p.nc, Log: p.log, Instance: "o1", Partitions: 4, LeaseTTL: testLeaseTTL,
		Models: scriptedModels{prov}, DefaultModel: "scripted/test", Logger: failOnRefusedMove(p.t)})
	if err != nil {
		t.Fatal(err)
	}
	kittest.Run(t, context.Background(), "orchestrator", o.Run)

	who := func(id string) string { return "key:" + id }
	send := func(cmd events.Command) {
		cmd.SessionID, cmd.Principal = "pr", who(cmd.ID)
		p.send(cmd)
	}
	send(events.Command{ID: "c0", Type: events.CmdCreate, Tools: []string{}})
	var ids []string
	for i := range 20 {
		id := fmt.Sprintf("p%d", i)
		send(events.Command{ID: id, Type: events.CmdPrompt, Text: "hello"})
		ids = append(ids, id)
	}
	// A busy refusal, a queued follow-up cleared by an abort, the abort,
	// a setting, a no-effect navigation.
	send(events.Command{ID: "slow", Type: events.CmdPrompt, Text: "slow please"})
	p.waitLog("pr", "the slow prompt", named("slow"))
	send(events.Command{ID: "busy", Type: events.CmdPrompt, Text: "again"})
	send(events.Command{ID: "fu", Type: events.CmdFollowUp, Text: "after that"})
	p.waitLog("pr", "the busy refusal", named("busy"))
	send(events.Command{ID: "ab", Type: events.CmdAbort})
	send(events.Command{ID: "lvl", Type: events.CmdSetThinkingLevel, Level: "low"})
	ids = append(ids, "slow", "busy", "fu", "ab", "lvl")
	es := p.waitLog("pr", "every command applied", func(es []events.Entry) bool {
		for _, id := range ids {
			if !named(id)(es) {
				return false
			}
		}
		return true
	})
	for _, e := range es {
		if e.CommandID != "" && e.Principal != who(e.CommandID) {
			t.Errorf("entry %s (%s) of command %s names %q, want %q", e.ID, e.Type, e.CommandID, e.Principal, who(e.CommandID))
		}
	}

	o.mu.Lock()
	a := o.mu.actors[events.DefaultRef("pr")]
	o.mu.Unlock()
	if a == nil {
		t.Fatal("session pr is not resident")
	}
	var held int
	kittest.Eventually(t, 10*time.Second, "the notes dropped", func() error {
		if held = a.st.principalsInFlight(); held != 0 {
			return fmt.Errorf("the store holds %d principals", held)
		}
		return nil
	})
}
